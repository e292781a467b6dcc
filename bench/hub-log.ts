// A benchmark's Hub writes one access-log line per request on stderr: its diagnostics are passed on to
// the bench's stderr, the access log (a JSON line) is dropped, so that a run's report stays readable.

import type { ChildProcess } from 'node:child_process';

export function forwardDiagnostics(child: ChildProcess): void {
  let rest = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const l of lines) if (!l.startsWith('{"at":')) process.stderr.write(l + '\n');
  });
}
