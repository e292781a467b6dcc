// Hand-written acceptance of the common read requests (capabilities, requirements, next, qualification
// and status), for the Hub: a Stop hook's qualification call reaches a Hub that is mostly idle between
// calls, where running the zod schema cold costs a good share of the answer's time. Exactly as in
// fast-mutations.ts, this only ever *accepts*, and only documents that ReadRequest (ops.ts) accepts
// too, giving the same value; everything else goes to the schema, which decides and words the error.
// test/unit/fast-reads.test.ts checks the agreement.

import type { ReadRequest } from './ops.js';
import { fastSubject } from './fast-mutations.js';
import { hasExactly, isHex64, isId, isObj } from './fast-checks.js';

const SUBJECT_ONLY = ['operation', 'subject'] as const;
const STATUS_KEYS = ['operation', 'subject', 'task_id', 'task_digest', 'attempt_id'] as const;

/** The read request as ReadRequest would give it, or undefined when the schema must decide. */
export function fastReadRequest(doc: unknown): ReadRequest | undefined {
  if (!isObj(doc)) return undefined;
  const operation = doc.operation;
  switch (operation) {
    case 'capabilities':
      return hasExactly(doc, ['operation']) ? { operation } : undefined;
    case 'requirements':
    case 'next':
    case 'qualification': {
      if (!hasExactly(doc, SUBJECT_ONLY)) return undefined;
      const subject = fastSubject(doc.subject);
      return subject ? { operation, subject } : undefined;
    }
    case 'status': {
      if (!hasExactly(doc, STATUS_KEYS)) return undefined;
      const { task_id, task_digest, attempt_id } = doc;
      const subject = fastSubject(doc.subject);
      if (!subject || !isId(task_id) || !isHex64(task_digest) || (attempt_id !== null && !isId(attempt_id))) return undefined;
      return { operation, subject, task_id, task_digest, attempt_id };
    }
    default:
      return undefined;
  }
}
