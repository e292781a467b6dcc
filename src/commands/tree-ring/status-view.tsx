// The interactive status table (ink). Imported only on a TTY without --json; never on a hook path.

import { Box, Text, renderToString } from 'ink';
import type { StatusReport } from '../../core/treering/activation/status.js';

const COLORS: Record<string, string> = {
  active: 'green',
  'configured-awaiting-proof': 'yellow',
  'active-isolated': 'cyan',
  'needs-trust': 'yellow',
  'needs-project-mount': 'yellow',
  'needs-plugin': 'yellow',
  'needs-user-review': 'red',
  unsupported: 'gray',
  failed: 'red',
};

export function StatusTable({ report }: { report: StatusReport }) {
  return (
    <Box flexDirection="column">
      <Text bold>{report.initialized ? `Tree Ring activation · store ${report.store_id}` : 'Tree Ring activation · not initialized'}</Text>
      {report.integrations.map((h) => (
        <Box key={h.harness_id} flexDirection="column" marginTop={1}>
          <Box>
            <Box width={14}>
              <Text bold>{h.name}</Text>
            </Box>
            <Text color={COLORS[h.state] ?? 'white'}>{h.state}</Text>
            {h.last_recall_result_count !== undefined ? <Text dimColor>{`  last recall: ${h.last_recall_result_count} (${h.last_recall_query_class})`}</Text> : null}
          </Box>
          {h.detail ? <Text dimColor>{`  ${h.detail}`}</Text> : null}
          <Text>{`  next: ${h.next_step}`}</Text>
        </Box>
      ))}
    </Box>
  );
}

/** Renders the table to a string (the runner prints it), so output stays flushable and testable. */
export async function renderStatusTable(report: StatusReport, columns = process.stdout.columns ?? 100): Promise<string> {
  return renderToString(<StatusTable report={report} />, { columns }).trimEnd() + '\n';
}
