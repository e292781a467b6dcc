// The safe lifecycle alias of a project name: what the capture checkpoint passes as --project and
// what preflight accepts besides the original basename (names with spaces and the like).

export function projectAlias(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'project';
}
