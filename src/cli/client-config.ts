// Client configuration: the values of the Hub-call options a command was not given on its command line.
// Flags win over the environment, the environment over the per-repository file, that over the user
// file. Files are read only when an option is missing, and only once per process.
//
//   environment   AGENTSCM_ENDPOINT  AGENTSCM_REPOSITORY  AGENTSCM_PROFILE  AGENTSCM_TOKEN_FILE  AGENTSCM_DATA_DIR  AGENTSCM_CA_FILE
//   user file     $AGENTSCM_CONFIG, else $XDG_CONFIG_HOME/agentscm/config.json, else ~/.config/agentscm/config.json
//   repository    .agentscm.json at the root of the Git repository around the working directory (the
//                 nearest ancestor with .git); it holds no secret and names no local path: only
//                 endpoint, repository, profile and ca_file, and it must not be writable by others
//
// Both files are strict JSON {"version": 1, ...} with the snake_case keys below and nothing else.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { badInput } from '../core/errors.js';

export interface ClientSetting {
  readonly flag: string;
  readonly env: string;
  readonly key: string;
  /** Whether the per-repository file may hold it (it is shared with everyone who clones). */
  readonly inRepository: boolean;
}

export const CLIENT_SETTINGS: readonly ClientSetting[] = [
  { flag: 'endpoint', env: 'AGENTSCM_ENDPOINT', key: 'endpoint', inRepository: true },
  { flag: 'repository', env: 'AGENTSCM_REPOSITORY', key: 'repository', inRepository: true },
  { flag: 'profile', env: 'AGENTSCM_PROFILE', key: 'profile', inRepository: true },
  { flag: 'token-file', env: 'AGENTSCM_TOKEN_FILE', key: 'token_file', inRepository: false },
  { flag: 'data-dir', env: 'AGENTSCM_DATA_DIR', key: 'data_dir', inRepository: false },
  { flag: 'ca-file', env: 'AGENTSCM_CA_FILE', key: 'ca_file', inRepository: true },
];

export const REPOSITORY_CONFIG_FILE = '.agentscm.json';
const CONFIG_MAX_BYTES = 64 * 1024;

/** Where a value came from: "env AGENTSCM_X" or "file PATH". */
export interface Resolved {
  readonly value: string;
  readonly source: string;
}

type FileValues = Readonly<Record<string, string>>;

export function userConfigPath(env: NodeJS.ProcessEnv): string {
  if (env.AGENTSCM_CONFIG) return env.AGENTSCM_CONFIG;
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'agentscm', 'config.json');
}

/** The per-repository file of the Git repository around cwd, if that repository has one. */
export function repositoryConfigPath(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; ) {
    if (fs.existsSync(path.join(dir, '.git'))) {
      const f = path.join(dir, REPOSITORY_CONFIG_FILE);
      return fs.existsSync(f) ? f : undefined;
    }
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

function readConfigFile(file: string, inRepository: boolean): FileValues {
  const bad = (why: string) => badInput(`client config ${file}: ${why}`, 'BAD_CLIENT_CONFIG');
  let text: string;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) throw bad('not a regular file');
    if (st.size > CONFIG_MAX_BYTES) throw bad(`over ${CONFIG_MAX_BYTES} bytes`);
    if (inRepository && (st.mode & 0o022) !== 0) throw bad('writable by group or others');
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw e instanceof Error && 'kind' in e ? e : bad(`unreadable (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw bad('must be a JSON object');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'version') {
      if (v !== 1) throw bad('version must be 1');
      continue;
    }
    const s = CLIENT_SETTINGS.find((x) => x.key === k);
    if (!s) throw bad(`unknown field ${JSON.stringify(k)}`);
    if (inRepository && !s.inRepository) throw bad(`${k} belongs in the user config file or ${s.env}, not in the repository`);
    if (typeof v !== 'string' || v.length === 0 || v.length > 4096) throw bad(`${k} must be a non-empty string`);
    out[s.flag] = v;
  }
  if ((doc as Record<string, unknown>).version !== 1) throw bad('version must be 1');
  return out;
}

/** The configured value of each flag a command was not given, resolved lazily and once. */
export class ClientConfig {
  private repositoryFile: { file: string; values: FileValues } | null | undefined;
  private userFile: { file: string; values: FileValues } | undefined;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly cwd: string,
  ) {}

  private repo(): { file: string; values: FileValues } | null {
    if (this.repositoryFile === undefined) {
      const f = repositoryConfigPath(this.cwd);
      this.repositoryFile = f === undefined ? null : { file: f, values: readConfigFile(f, true) };
    }
    return this.repositoryFile;
  }

  private user(): { file: string; values: FileValues } {
    if (!this.userFile) {
      const f = userConfigPath(this.env);
      this.userFile = { file: f, values: readConfigFile(f, false) };
    }
    return this.userFile;
  }

  /** The value for a flag that was not given, or undefined when nothing configures it. */
  lookup(flag: string): Resolved | undefined {
    const s = CLIENT_SETTINGS.find((x) => x.flag === flag);
    if (!s) return undefined;
    const e = this.env[s.env];
    if (e !== undefined && e !== '') return { value: e, source: `env ${s.env}` };
    const r = this.repo();
    if (r && r.values[flag] !== undefined) return { value: r.values[flag]!, source: `file ${r.file}` };
    const u = this.user();
    if (u.values[flag] !== undefined) return { value: u.values[flag]!, source: `file ${u.file}` };
    return undefined;
  }

  /** The files consulted, for `config show`. */
  files(): { user: string; repository: string | null } {
    return { user: this.user().file, repository: this.repo()?.file ?? null };
  }
}
