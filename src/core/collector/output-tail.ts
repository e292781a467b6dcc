// The readable end of a check's captured output: what a person needs to see why a check failed,
// bounded and safe to print. The record keeps the bytes (base64, up to the profile's bound); this is
// only a view of their last lines, with every control character but the newline escaped (\xHH), so a
// check's output can never drive the terminal.

/** At most this many of the last bytes, then at most this many of their last lines. */
export const TAIL_MAX_BYTES = 2048;
export const TAIL_MAX_LINES = 20;

export interface OutputTail {
  /** The escaped tail, lines joined by "\n" (no trailing newline); empty when there was no output. */
  readonly text: string;
  /** Whether earlier output was left out (here, or already by the record's capture bound). */
  readonly cut: boolean;
}

export function outputTail(dataBase64: string, truncatedInRecord = false, maxBytes = TAIL_MAX_BYTES, maxLines = TAIL_MAX_LINES): OutputTail {
  const bytes = Buffer.from(dataBase64, 'base64');
  let cut = truncatedInRecord || bytes.length > maxBytes;
  const end = bytes.subarray(Math.max(0, bytes.length - maxBytes));
  let lines = end.toString('utf8').replace(/\r?\n$/, '').split(/\r?\n/);
  if (bytes.length > maxBytes && lines.length > 1) lines = lines.slice(1); // a partial first line
  if (lines.length > maxLines) {
    lines = lines.slice(-maxLines);
    cut = true;
  }
  const text = lines.map(escapeControls).join('\n');
  return { text: text === '' && lines.length === 1 ? '' : text, cut };
}

export function escapeControls(s: string): string {
  return s.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The tail as indented lines under a heading, for a command's text output ('' when there is none). */
export function renderTail(name: string, t: OutputTail): string {
  if (t.text === '') return '';
  return `${name}${t.cut ? ' (last lines)' : ''}:\n${t.text.split('\n').map((l) => `  | ${l}`).join('\n')}\n`;
}
