// Plain types of what the authority stores. No zod here: the Stop hook reads the authority too.

export type ActionClass = 'command_collector' | 'review_collector' | 'observation' | 'agent_assertion' | 'controller_only';
export const ACTION_CLASSES: readonly ActionClass[] = ['command_collector', 'review_collector', 'observation', 'agent_assertion', 'controller_only'];

export interface Criterion {
  readonly id: string;
  readonly text: string;
  readonly required: boolean;
  readonly controller_only: boolean;
}

export interface NamedReference {
  readonly name: string;
  /** Canonical relative path inside the subject's immutable snapshot. */
  readonly path: string;
  readonly sha256: string;
}

export interface RequirementStep {
  readonly id: string;
  readonly skill: string;
  readonly action_class: ActionClass;
  readonly required: boolean;
  readonly depends_on: readonly string[];
  readonly summary: string;
  readonly criteria: readonly Criterion[];
  readonly references: readonly NamedReference[];
}

/** A workflow requirement (format version 1), normalized: see docs/HUB.md "The requirement file". */
export interface Requirement {
  readonly version: 1;
  readonly workflow: string;
  readonly steps: readonly RequirementStep[];
}

export interface Profile {
  readonly repository: string;
  readonly profile: string;
  readonly target: string;
  readonly requirement_digest: string;
  readonly policy_epoch: number;
  readonly publish_forge_status: boolean;
}

/**
 * WorkflowTaskSubject: everything a task binds. A Change version plus the profile's policy epoch at
 * which it is evaluated; the wire form of the subject in every task-bound request.
 */
export interface Subject {
  readonly repository: string;
  readonly profile: string;
  readonly target: string;
  readonly change_id: string;
  readonly change_version: number;
  readonly revision: string;
  readonly context_digest: string;
  readonly policy_epoch: number;
  readonly requirement_digest: string;
  readonly plan_digest: string;
}

export interface ChangeVersion {
  readonly repository: string;
  readonly change_id: string;
  readonly change_version: number;
  readonly revision: string;
  readonly parent_revision: string | null;
  readonly context_digest: string;
  readonly created_at: number;
}

export interface TokenActor {
  readonly token_id: string;
  readonly owner_id: string;
  readonly agent_id: string;
  /** The one repository the token may act on, or null for every repository of the data dir. */
  readonly repository: string | null;
  /** full: every operation; read: the read-only operations only. */
  readonly scope: TokenScope;
}

export type TokenScope = 'full' | 'read';

export interface Enrollment {
  readonly registration_id: string;
  readonly repository: string;
  readonly profile: string;
  readonly step_id: string;
  readonly executor_id: string;
  readonly registration_epoch: number;
  readonly public_key: string;
  readonly verification_key_id: string;
  readonly created_at: number;
  readonly revoked_at: number | null;
}

/** An approval of one exact subject with its receipt, after admission's recheck. */
export interface ApprovalRow {
  readonly approval_id: string;
  readonly repository: string;
  readonly profile: string;
  readonly change_id: string;
  readonly change_version: number;
  readonly policy_epoch: number;
  readonly context_digest: string;
  readonly revision: string;
  readonly receipt_digest: string;
  /** "operator" (trusted-local) or "token:<token id>". */
  readonly actor: string;
  readonly created_at: number;
}

/** A landing: the target moved from base_revision to revision for this subject and receipt. */
export interface IntegrationRow {
  readonly integration_id: string;
  readonly repository: string;
  readonly profile: string;
  readonly target: string;
  readonly change_id: string;
  readonly change_version: number;
  readonly policy_epoch: number;
  readonly revision: string;
  readonly base_revision: string | null;
  readonly receipt_digest: string;
  readonly approval_id: string;
  readonly actor: string;
  readonly created_at: number;
}
