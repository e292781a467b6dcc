// The journal as approval and landing read it from the data dir, outside the Hub: read-only (never
// created, never migrated), just the rows admission needs (admission.ts AdmissionJournal). The Hub's
// own reads and writes of the same file are src/hub/journal.ts, which owns its schema.

import * as path from 'node:path';
import type Database from 'better-sqlite3';
import { openDatabase } from '../sqlite/open.js';
import type { Subject } from '../authority/types.js';
import { localState } from '../errors.js';
import { checkStoreFile, lstatOrUndefined } from '../fs/safe.js';
import type { AdmissionJournal } from './admission.js';

export const JOURNAL_FILE = 'journal.sqlite';

export interface ReceiptListRow {
  readonly receipt_digest: string;
  readonly repository: string;
  readonly profile: string;
  readonly change_id: string;
  readonly change_version: number;
  readonly policy_epoch: number;
  readonly revision: string;
  readonly created_at: number;
}
/** The journal schema versions whose receipts, transfers and attempts tables this reader knows. */
export const JOURNAL_READABLE_VERSIONS: readonly number[] = [3, 4];

export class JournalReader implements AdmissionJournal {
  private constructor(private readonly db: Database.Database) {}

  /** The data dir's journal, or undefined when the Hub has not created one yet. */
  static open(dataDir: string): JournalReader | undefined {
    const f = path.join(dataDir, JOURNAL_FILE);
    if (!checkStoreFile(f, lstatOrUndefined(f), 'the journal')) return undefined;
    const db = openDatabase(f, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    const v = db.pragma('user_version', { simple: true }) as number;
    if (!JOURNAL_READABLE_VERSIONS.includes(v)) {
      db.close();
      throw localState(`journal schema is version ${v}, this program reads ${JOURNAL_READABLE_VERSIONS.join(' or ')}`, 'SCHEMA_NOT_CURRENT');
    }
    return new JournalReader(db);
  }

  receiptFor(s: Subject): string | undefined {
    const r = this.db
      .prepare(
        `SELECT receipt_digest FROM receipts WHERE repository = ? AND profile = ? AND change_id = ? AND change_version = ? AND policy_epoch = ?
           AND context_digest = ? AND requirement_digest = ? AND revision = ? ORDER BY created_at DESC LIMIT 1`,
      )
      .get(s.repository, s.profile, s.change_id, s.change_version, s.policy_epoch, s.context_digest, s.requirement_digest, s.revision) as { receipt_digest: string } | undefined;
    return r?.receipt_digest;
  }

  receiptBody(receiptDigest: string): Buffer | undefined {
    return (this.db.prepare('SELECT body FROM receipts WHERE receipt_digest = ?').get(receiptDigest) as { body: Buffer } | undefined)?.body;
  }

  transfer(transferDigest: string): ReturnType<AdmissionJournal['transfer']> {
    return this.db
      .prepare('SELECT attempt_id, task_id, outcome, bytes_digest, registration_id, collector_profile_install_id, grant_generation FROM transfers WHERE transfer_digest = ?')
      .get(transferDigest) as ReturnType<AdmissionJournal['transfer']>;
  }

  latestAttempt(taskId: string): ReturnType<AdmissionJournal['latestAttempt']> {
    return this.db.prepare('SELECT attempt_id, state, outcome, registration_id FROM attempts WHERE task_id = ? ORDER BY fence DESC LIMIT 1').get(taskId) as ReturnType<AdmissionJournal['latestAttempt']>;
  }

  /** Every retained receipt (never its body), oldest first, optionally of one repository. */
  receipts(repository?: string): ReceiptListRow[] {
    const sql =
      'SELECT receipt_digest, repository, profile, change_id, change_version, policy_epoch, revision, created_at FROM receipts' +
      (repository === undefined ? '' : ' WHERE repository = ?') +
      ' ORDER BY created_at, receipt_digest';
    return this.db.prepare(sql).all(...(repository === undefined ? [] : [repository])) as ReceiptListRow[];
  }

  close(): void {
    this.db.close();
  }
}
