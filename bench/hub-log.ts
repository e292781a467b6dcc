// What the benches share about the Hub processes they start. A benchmark's Hub writes one access-log
// line per request on stderr: its diagnostics are passed on to the bench's stderr, the access log (a
// JSON line) is dropped, so that a run's report stays readable.

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

/** HUB_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=DIR"): the node options a bench gives each Hub process it starts. */
export function hubNodeArgs(): string[] {
  const v = process.env.HUB_NODE_ARGS;
  return v ? v.split(' ').filter((a) => a !== '') : [];
}
