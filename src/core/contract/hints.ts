// One fixed sentence per stable Hub error code, naming the fix. The CLI prints it under a Hub refusal
// ("hint: …", and `hint` in the --json error's detail), and docs/HUB.md lists the same table (a unit test
// keeps the two, and the codes the Hub can emit, in step). A code the table does not know has no hint.

export const HUB_ERROR_HINTS: Readonly<Record<string, string>> = {
  // Transport and request shape.
  bad_request: 'Send a well-formed HTTP/1.1 request (CRLF line ends, one content-length or chunked coding).',
  body_too_large: 'Send a smaller request body: requests are at most 64 KiB (a result 257 KiB, an upload 16 MiB).',
  header_too_large: 'Send a request head under 16 KiB.',
  http_version_not_supported: 'Speak HTTP/1.1 to the Hub.',
  invalid_request: 'Fix the request the message names (strict JSON, the schema, a valid OWNER/NAME and profile), then send it again.',
  length_required: 'Send a content-length header with a transfer upload.',
  method_not_allowed: 'Use POST for this route.',
  not_found: 'Check the endpoint URL: the Hub has no such route (see `agentscm agent-task capabilities`).',
  not_implemented: 'Send the body with a content-length or the chunked transfer coding only.',
  request_timeout: 'Retry the identical request over a faster connection: the Hub stopped waiting for it.',
  unsupported_media_type: 'Send the body as application/json (application/octet-stream on the upload route).',
  unsupported_operation: 'Upgrade the Hub or use an operation `agentscm agent-task capabilities` lists.',
  subject_scope_mismatch: 'Name the same repository and profile in --repository/--profile as in the subject.',
  assertion_too_large: 'Shorten the assertion: its compact encoding is at most 262,144 bytes.',
  bundle_too_large: 'Export fewer transfers at once: the receipt bundle would exceed its bound.',
  transfer_too_large: 'Reduce the check output the collector retains: a transfer has a fixed maximum size.',
  // Credentials and scope.
  unauthenticated: 'Pass a current workspace token with --token-file (issue one with `agentscm authority token issue`).',
  forbidden: 'Use a token issued for this repository (`agentscm authority token issue --repository OWNER/NAME`).',
  insufficient_scope: 'Use a token issued without --scope read for this operation.',
  not_authorized: 'Use a token issued with `agentscm authority token issue --may-integrate` to approve or land.',
  // The Hub itself.
  internal: 'Report the bug with the Hub\'s log: the Hub failed unexpectedly.',
  journal_busy: 'Retry the identical request (same --request-id) in a moment.',
  journal_integrity: 'Restore the Hub\'s data dir from a backup: a retained task no longer matches its digest.',
  receipt_integrity: 'Restore the Hub\'s data dir from a backup: a stored receipt no longer matches its digest.',
  store_integrity: 'Reinstall the collector profile with `agentscm authority collector-profile install`: the stored one does not match its digest.',
  store_unavailable: 'Check the Hub\'s data dir (it must exist, be readable and be of this version); `hub serve` logs the cause.',
  no_receipt_key: 'Start the Hub with `hub serve --receipt-key-dir DIR` to serve receipts.',
  snapshot_unavailable: 'Run `agentscm checkpoint` again: the Hub cannot read the Change\'s snapshot.',
  // What a name refers to.
  profile_not_found: 'Add the profile with `agentscm authority profile add`, or name one this Hub serves.',
  change_not_found: 'Run `agentscm checkpoint` in the workspace to create the Change, then use its id.',
  subject_not_found: 'Run `agentscm agent-task requirements` (or checkpoint again) to get the Change\'s current subject.',
  subject_not_current: 'Run `agentscm checkpoint` and use the new subject: the Change has moved on.',
  task_not_found: 'Take the task id from `agentscm agent-task next` or `agent-task status` for this subject.',
  attempt_not_found: 'Take the attempt id from `agentscm agent-task status` for this task.',
  receipt_not_found: 'Finish the collector steps and run `agentscm agent-task collector-finalize` to make a receipt.',
  task_digest_mismatch: 'Use the task exactly as `agentscm agent-task next` returned it.',
  attempt_digest_mismatch: 'Use the attempt exactly as the Hub returned it (read it again with `agentscm agent-task status`).',
  // Claims, leases and ordering.
  dependency_not_satisfied: 'Finish the steps this one depends on first (`agentscm agent-task status` shows which).',
  prior_subject_unresolved: 'Reconcile the older subject\'s attempt with `agentscm agent-task reconcile` first.',
  attempt_in_progress: 'Wait for the live lease to end, or cancel it with `agentscm agent-task cancel`.',
  attempt_unresolved: 'Reconcile the expired attempt with `agentscm agent-task reconcile` before claiming again.',
  attempt_finished: 'Nothing to reconcile: read the outcome with `agentscm agent-task status`.',
  attempt_not_leased: 'Claim the task again: the attempt is no longer leased.',
  lease_expired: 'Reconcile the attempt with `agentscm agent-task reconcile`, then claim again.',
  stale_fence: 'Read the current attempt with `agentscm agent-task status` and use its fence.',
  task_finished: 'Run `agentscm checkpoint` for fresh task ids: this task already finished.',
  not_attempt_holder: 'Heartbeat with the token of the agent that claimed the attempt.',
  not_attempt_owner: 'Act on the attempt with the token of the agent that claimed it.',
  binding_mismatch: 'Send the result under the execution identity and executor the attempt was claimed with.',
  agent_mismatch: 'Name the authenticated token\'s agent in the assertion.',
  controller_only_step: 'Leave this step to its controller: it cannot be claimed.',
  controller_only_criterion: 'Mark the controller-only criterion not_claimed in the assertion.',
  no_eligible_criterion: 'Claim at least one eligible required criterion in a passing assertion.',
  collector_step: 'Claim a collector step with `agentscm agent-task collector-claim` (or `agent-task collect`).',
  not_a_collector_step: 'Use `agentscm agent-task claim` for a step that is not a collector step.',
  not_a_collector_attempt: 'Use the collector commands only for an attempt claimed with collector-claim.',
  // Idempotency.
  request_id_conflict: 'Use a new --request-id: this one was used with other request bytes.',
  request_id_kind_conflict: 'Use a new --request-id: this one was used for another kind of request.',
  request_id_other_task: 'Use a new --request-id: this one belongs to another task.',
  upload_request_conflict: 'Use a new upload request id: this one was used with other transfer bytes.',
  transfer_exists: 'Finalize with the transfer already retained, or reconcile the attempt and collect again.',
  // Enrollment and collector profiles.
  enrollment_not_current: 'Enroll the executor again with `agentscm authority enroll` (its enrollment is revoked or superseded).',
  enrollment_revoked: 'Enroll the collector key again with `agentscm authority enroll`.',
  no_collector_profile: 'Install a collector profile for the step with `agentscm authority collector-profile install`.',
  collector_profile_changed: 'Claim the task again under the collector profile installed now.',
  collector_profile_mismatch: 'Install the collector profile for this step with `agentscm authority collector-profile install`.',
  registration_mismatch: 'Sign the transfer with the enrolled key and epoch (`agentscm authority enroll` to enroll a new one).',
  wrong_audience: 'Collect against the Hub whose authority issued the claim.',
  origin_mismatch: 'Upload the transfer with the token that claimed the attempt.',
  outcome_mismatch: 'Collect again: the transfer\'s outcome disagrees with its record.',
  transfer_kind_mismatch: 'Collect with the collector profile installed for the step.',
  transfer_scope_mismatch: 'Upload the transfer to the repository and profile it names.',
  invalid_transfer: 'Collect again with this version of agentscm: the uploaded bytes are not a valid transfer.',
  invalid_record: 'Collect again: the execution record is not valid JSON.',
  record_binding_mismatch: 'Collect again for this attempt: the record is for another execution request.',
  request_mismatch: 'Collect with the execution request the installed profile pins (reinstall the profile if it changed).',
  runtime_identity_mismatch: 'Re-probe the runtime with `agentscm agent-task runtime-probe` and reinstall the collector profile, or collect on the pinned runtime.',
  isolation_not_met: 'Collect on an engine that gives the isolation the profile requires.',
  cleanup_not_confirmed: 'Collect again on an engine that confirms container removal.',
  output_bounds: 'Keep the check\'s output within the recipe\'s bounds, or raise them in a new collector profile.',
  signature_invalid: 'Sign with the key enrolled for this executor (`agentscm authority enroll`).',
  observation_digest_mismatch: 'Compute observation_digest with `agentscm agent-task observation digest`.',
  not_ready: 'Finish every required collector step before `agentscm agent-task collector-finalize`.',
  authorization_changed: 'Collect again: an enrollment, token or collector profile the evidence rests on changed.',
  // Review collectors.
  executable_changed: 'Reinstall the review profile for the reviewer executable now installed, or restore the pinned one.',
  observation_missing: 'Collect the review again: an observation the controller needs was not retained.',
  observation_unexpected: 'Collect the review again with this version: the record retains observations the controller never dispatches.',
  observation_mismatch: 'Collect the review again: an observation does not match what the controller dispatched.',
  record_mismatch: 'Collect the review again: the record differs from the one the controller derives.',
  review_basis_refused: 'Review with the transport and provider the review profile pins.',
  reviewer_identity_mismatch: 'Review with the reviewer identity the review profile pins.',
  policy_digest_mismatch: 'Install a review profile for the subject\'s current policy.',
  // Approve and land (the admission refusals).
  subject_superseded: 'Qualify and approve the Change\'s newest version (`agentscm checkpoint` shows it).',
  policy_changed: 'Qualify the Change again under the installed requirement, then approve it.',
  executor_revoked: 'Collect again with a current enrollment (`agentscm authority enroll`), then approve.',
  origin_revoked: 'Claim and collect again with a current workspace token, then approve.',
  profile_changed: 'Collect again under the installed collector profile, then approve.',
  target_moved: 'Rebase the Change onto the target\'s new revision and checkpoint it again.',
  not_qualified: 'Finish the required steps (`agentscm agent-task qualification` names what is missing).',
  not_approved: 'Approve the Change with `agentscm approve` first.',
};

/** The hint sentence for a Hub error code, or undefined for a code the table does not know. */
export function hubErrorHint(code: string): string | undefined {
  return Object.hasOwn(HUB_ERROR_HINTS, code) ? HUB_ERROR_HINTS[code] : undefined;
}

/** The table as the Markdown docs/HUB.md carries between its hint markers. */
export function hubErrorHintsMarkdown(): string {
  const rows = Object.keys(HUB_ERROR_HINTS).sort().map((c) => `| \`${c}\` | ${HUB_ERROR_HINTS[c]!.replace(/\|/g, '\\|')} |`);
  return ['| code | hint |', '| --- | --- |', ...rows].join('\n');
}
