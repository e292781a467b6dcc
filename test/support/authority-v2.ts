// An authority file as schema version 2 wrote it, made from a current one: without the version-3
// tables (targets, approvals, integrations …) and without the tokens' scope column.
import Database from 'better-sqlite3';

export const V3_TABLES = ['targets', 'change_bases', 'change_commits', 'integrator_tokens', 'approvals', 'integrations'];

export function downgradeToV2(file: string): void {
  const db = new Database(file);
  try {
    for (const t of [...V3_TABLES].reverse()) db.exec(`DROP TABLE ${t}`);
    db.exec('ALTER TABLE tokens DROP COLUMN scope');
    db.pragma('user_version = 2');
  } finally {
    db.close();
  }
}
