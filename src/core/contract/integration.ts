// Wire types of the Hub's approval and landing operations (docs/HUB.md "approve and land"): the request
// names the exact subject the caller means; the Hub admits only the Change's current subject.

import { z } from 'zod';
import { SubjectSchema } from './ops.js';

export const INTEGRATION_OPERATIONS = ['approve', 'land'] as const;

export const IntegrationRequest = z.discriminatedUnion('operation', [
  z.strictObject({ operation: z.literal('approve'), subject: SubjectSchema }),
  z.strictObject({ operation: z.literal('land'), subject: SubjectSchema }),
]);
export type IntegrationRequest = z.infer<typeof IntegrationRequest>;
