// Text rules Tree Ring shares with its upstream CLI.

/**
 * ASCII letters lowercased, every other character kept (Rust's to_ascii_lowercase, which upstream uses
 * for terms, keys and scoring): String's toLowerCase would also fold letters beyond ASCII.
 */
export function asciiLowercase(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}
