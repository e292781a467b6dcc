// The workflow requirement file (format version 1), validated strictly at `authority profile add`.
// The authority stores the normalized canonical bytes; its digest is the requirement_digest.

import { z } from 'zod';
import { canonicalJsonBytes, parseStrictJson, type JsonValue } from '../canonical/json.js';
import { DOMAINS, domainDigest } from '../crypto/digest.js';
import { badInput } from '../errors.js';
import { ACTION_CLASSES, type Requirement } from '../authority/types.js';
import { formatIssues, Hex64, Id } from './common.js';
import { referencePathProblem } from './paths.js';

export const REQUIREMENT_MAX_BYTES = 256 * 1024;
export const MAX_STEPS = 64;
export const MAX_STEP_CRITERIA = 64;
export const MAX_REFERENCES = 32;
export const MAX_TEXT = 4096;

const Text = z.string().min(1).max(MAX_TEXT).refine((s) => !s.includes('\u0000'), 'must not contain NUL');

const RefPath = z.string().superRefine((p, ctx) => {
  const problem = referencePathProblem(p);
  if (problem) ctx.addIssue({ code: 'custom', message: `reference path ${problem}` });
});

const CriterionSchema = z.strictObject({ id: Id, text: Text, required: z.boolean(), controller_only: z.boolean() });
const ReferenceSchema = z.strictObject({ name: Id, path: RefPath, sha256: Hex64 });

const StepSchema = z.strictObject({
  id: Id,
  skill: Id,
  action_class: z.enum(ACTION_CLASSES as [string, ...string[]]),
  required: z.boolean(),
  depends_on: z.array(Id).max(MAX_STEPS),
  summary: Text,
  criteria: z.array(CriterionSchema).min(1, 'every step has at least one criterion').max(MAX_STEP_CRITERIA),
  references: z.array(ReferenceSchema).max(MAX_REFERENCES),
});

const RequirementSchema = z
  .strictObject({
    version: z.literal(1, 'unsupported requirement version (expected 1)'),
    workflow: Id,
    steps: z.array(StepSchema).min(1).max(MAX_STEPS),
  })
  .superRefine((r, ctx) => {
    const ids = new Set<string>();
    r.steps.forEach((s, i) => {
      if (ids.has(s.id)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'id'], message: `duplicate step id ${s.id}` });
      ids.add(s.id);
      const crit = new Set<string>();
      s.criteria.forEach((c, k) => {
        if (crit.has(c.id)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'criteria', k, 'id'], message: `duplicate criterion ${c.id}` });
        crit.add(c.id);
      });
      const refs = new Set<string>();
      s.references.forEach((ref, k) => {
        if (refs.has(ref.name)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'references', k, 'name'], message: `duplicate reference ${ref.name}` });
        refs.add(ref.name);
      });
      if (s.action_class === 'review_collector') {
        // The finite review controller evaluates every criterion itself, controller_only ones included.
        if (!s.criteria.some((c) => c.required)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'criteria'], message: 'a review_collector step needs a required criterion' });
      } else if (s.action_class === 'controller_only') {
        if (s.criteria.some((c) => !c.controller_only)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'criteria'], message: 'a controller_only step has only controller_only criteria' });
      } else if (!s.criteria.some((c) => c.required && !c.controller_only)) {
        ctx.addIssue({ code: 'custom', path: ['steps', i, 'criteria'], message: 'a step an agent or collector performs needs a required criterion that is not controller_only' });
      }
      if (new Set(s.depends_on).size !== s.depends_on.length) ctx.addIssue({ code: 'custom', path: ['steps', i, 'depends_on'], message: 'duplicate dependency' });
    });
    r.steps.forEach((s, i) => {
      for (const d of s.depends_on) {
        if (d === s.id) ctx.addIssue({ code: 'custom', path: ['steps', i, 'depends_on'], message: 'a step cannot depend on itself' });
        else if (!ids.has(d)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'depends_on'], message: `unknown step ${d}` });
      }
    });
  });

/** Strictly decodes a requirement file and returns it normalized, with its canonical bytes and digest. */
export function decodeRequirement(bytes: Uint8Array, what = 'requirement file'): { requirement: Requirement; canonical: Buffer; digest: string } {
  const r = RequirementSchema.safeParse(parseStrictJson(bytes, { maxBytes: REQUIREMENT_MAX_BYTES, what }));
  if (!r.success) throw badInput(`${what} is invalid: ${formatIssues(r.error)}`, 'INVALID_REQUIREMENT');
  const requirement = r.data as Requirement;
  const canonical = canonicalJsonBytes(requirementToJson(requirement));
  return { requirement, canonical, digest: domainDigest(DOMAINS.requirement, canonical) };
}

/** The normalized requirement in declared field order (its digest preimage). */
export function requirementToJson(r: Requirement): JsonValue {
  return {
    version: r.version,
    workflow: r.workflow,
    steps: r.steps.map((s) => ({
      id: s.id,
      skill: s.skill,
      action_class: s.action_class,
      required: s.required,
      depends_on: [...s.depends_on],
      summary: s.summary,
      criteria: s.criteria.map((c) => ({ id: c.id, text: c.text, required: c.required, controller_only: c.controller_only })),
      references: s.references.map((ref) => ({ name: ref.name, path: ref.path, sha256: ref.sha256 })),
    })),
  };
}
