// The receipt bundle operation (agentscm receipt export): the Hub builds and signs the bundle of the
// named subject's receipt with its receipt key. Its answer is the bundle document itself, checked by
// `receipt verify` (core/attest/receipt-bundle.ts), not by a schema here.

import { z } from 'zod';
import { SubjectSchema } from './ops.js';

export const EXPORT_OPERATIONS = ['receipt_bundle'] as const;

export const ReceiptBundleRequest = z.strictObject({ operation: z.literal('receipt_bundle'), subject: SubjectSchema });
export type ReceiptBundleRequest = z.output<typeof ReceiptBundleRequest>;

/**
 * A bundle answer is at most this large: 32 transfers of the usual size fit many times over; a receipt
 * whose transfers are larger is refused (bundle_too_large) rather than streamed.
 */
export const BUNDLE_MAX_BYTES = 64 * 1024 * 1024;
