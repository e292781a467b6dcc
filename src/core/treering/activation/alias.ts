// The safe lifecycle alias of a project name: what the capture checkpoint passes as --project and
// what preflight accepts besides the original basename (names with spaces and the like).

/** Every run of characters outside [A-Za-z0-9._-] becomes one "-", then leading and trailing "-" go. */
export function projectAlias(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'project';
}
