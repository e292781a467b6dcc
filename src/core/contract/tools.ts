// The workspace MCP endpoint's tools: one per operation of the workspace HTTP facade, named like it. A
// tool's input is its operation's request schema without the `operation` field (one source), and it
// runs that operation through the facade itself (src/hub/mcp.ts).

import type { z } from 'zod';
import { CollectorClaimRequest, CollectorDescriptorRequest, CollectorFinalizeRequest } from './collector.js';
import { CancelRequest, ClaimRequest, HeartbeatRequest, ReconcileRequest, RecoveryRequest, ResultRequest } from './mutations.js';
import { CapabilitiesRequest, InstructionsRequest, NextRequest, QualificationRequest, ReferenceRequest, RequirementsRequest, StatusRequest } from './ops.js';

export interface ToolSpec {
  readonly name: string;
  readonly request: z.ZodObject;
  /** Answered for a read-scope token (`authority token issue --scope read`). */
  readonly read: boolean;
  readonly description: string;
}

const SUBJECT = 'The subject is the exact Change version of `agentscm agent-task subject` (repository and profile as in the endpoint URL).';

/** The sixteen tools, sorted by name. */
export const TOOLS: readonly ToolSpec[] = [
  { name: 'cancel', request: CancelRequest, read: false, description: 'Cancels the named leased attempt (exact attempt id, digest, fence and execution operation id). Idempotent by request_id.' },
  { name: 'capabilities', request: CapabilitiesRequest, read: true, description: 'The task contract this Hub speaks: capability, supported schema versions and operation names. No input.' },
  { name: 'claim', request: ClaimRequest, read: false, description: `Claims a task for agent work and returns the attempt with its fence and lease. Pick a fresh request_id and execution_operation_id; retry an uncertain claim with the identical input. ${SUBJECT}` },
  { name: 'collector_claim', request: CollectorClaimRequest, read: false, description: `Claims a task for an operator-enrolled collector (executor_id) before \`agentscm agent-task collect\` runs it. ${SUBJECT}` },
  { name: 'collector_descriptor', request: CollectorDescriptorRequest, read: true, description: 'The server-derived descriptor of an existing collector attempt. Read-only. The signed transfer itself is uploaded over HTTP by `agentscm agent-task collect`.' },
  { name: 'collector_finalize', request: CollectorFinalizeRequest, read: false, description: `Creates (or re-creates, as reconciliation) the subject's receipt from the transfers already uploaded. ${SUBJECT}` },
  { name: 'heartbeat', request: HeartbeatRequest, read: false, description: 'Extends the lease of the named leased attempt (exact attempt binding and fence). Idempotent by request_id.' },
  { name: 'instructions', request: InstructionsRequest, read: true, description: `The entrypoint of one task: summary, criteria, references and how it progresses (claim or collector_claim). ${SUBJECT}` },
  { name: 'next', request: NextRequest, read: true, description: `The next task to work on for the subject and what to do about it. Read-only. ${SUBJECT}` },
  { name: 'qualification', request: QualificationRequest, read: true, description: `Whether the subject is qualified now (current subject and exact receipt), with the failures otherwise. Read-only and advisory: admission rechecks. ${SUBJECT}` },
  { name: 'reconcile', request: ReconcileRequest, read: false, description: 'Supersedes the named attempt with a strictly greater fence after an uncertain outcome (see recovery). Idempotent by request_id.' },
  { name: 'recovery', request: RecoveryRequest, read: true, description: 'Side-effect free: what became of a request id (or an attempt), which effects are confirmed and which actions are permitted next.' },
  { name: 'reference', request: ReferenceRequest, read: true, description: `One named reference of a task's entrypoint, by its expected sha256 and schema version. Read-only. ${SUBJECT}` },
  { name: 'requirements', request: RequirementsRequest, read: true, description: `The subject's installed requirement: workflow, digests and every task with its state. Read-only. ${SUBJECT}` },
  { name: 'result', request: ResultRequest, read: false, description: "Records the agent's task result assertion for a leased attempt. Always retained as nonpassing material: only a collector receipt qualifies." },
  { name: 'status', request: StatusRequest, read: true, description: `The state of one task and, with attempt_id, of that attempt. Read-only. ${SUBJECT}` },
];

/** The operations a read-scope token may run: the read-only tools. */
export const READ_SCOPE_OPERATIONS: readonly string[] = TOOLS.filter((t) => t.read).map((t) => t.name);
