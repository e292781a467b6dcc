// agentscm agent-task transfer show --attempt-id ID: the retained signed transfer of an attempt, made
// readable: what ran (task, attempt, runtime), how it ended, and the end of its stdout and stderr,
// escaped. Local and read-only: it reads the collector's state dir, never the Hub.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { decodeContract } from '../../core/contract/common.js';
import { ExecutionRecordSchema, TransferHeaderSchema } from '../../core/contract/collector.js';
import { outputTail, renderTail } from '../../core/collector/output-tail.js';
import { HEADER_MAX_BYTES, sliceRecords, splitTransfer, transferDigest } from '../../core/collector/transfer.js';
import { retainedTransfer } from './retained.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const { bytes } = await retainedTransfer(inv, ' (collect has not finished it)');
  const t = splitTransfer(bytes);
  const header = decodeContract(t.header, TransferHeaderSchema, { maxBytes: HEADER_MAX_BYTES, what: 'retained transfer header' });
  const [, recordBytes] = sliceRecords(t.rest, header.records);
  const record = decodeContract(recordBytes!, ExecutionRecordSchema, { maxBytes: bytes.length, what: 'retained execution record' });
  const stdout = outputTail(record.stdout.data_base64, record.stdout.truncated);
  const stderr = outputTail(record.stderr.data_base64, record.stderr.truncated);
  const data = {
    attempt_id: header.attempt_id,
    task_id: header.task_id,
    step_id: header.step_id,
    transfer_digest: transferDigest(t.header),
    outcome: record.outcome,
    exit_code: record.exit_code,
    timed_out: record.timed_out,
    oom_killed: record.oom_killed,
    started_at: record.started_at,
    finished_at: record.finished_at,
    stdout_bytes: record.stdout.total_bytes,
    stderr_bytes: record.stderr.total_bytes,
    stdout_tail: stdout.text,
    stderr_tail: stderr.text,
  };
  const text =
    `attempt ${header.attempt_id} (task ${header.task_id}, step ${header.step_id}): ${record.outcome} (exit ${record.exit_code}` +
    `${record.timed_out ? ', timed out' : ''}${record.oom_killed ? ', out of memory' : ''})\n` +
    `ran ${record.started_at} .. ${record.finished_at}; stdout ${record.stdout.total_bytes} bytes, stderr ${record.stderr.total_bytes} bytes\n` +
    `transfer ${data.transfer_digest}\n` +
    renderTail('stdout', stdout) +
    renderTail('stderr', stderr);
  return { data, text };
}
