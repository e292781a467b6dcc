// The real-hosts harness: install the pinned Claude Code and Codex CLIs, stand in for their model
// APIs on loopback, run them headless in a project with hooks, and check hook output against Codex's
// schemas. See README.md in this directory.

export { ensureHosts, hostsCacheDir, CLAUDE_CODE_VERSION, CODEX_VERSION, type HostPaths } from './install.js';
export {
  startAnthropicStandin,
  startOpenAIStandin,
  type Standin,
  type StandinOptions,
  type RecordedRequest,
  type ReplyScript,
} from './standin.js';
export {
  runClaude,
  runCodex,
  codexConfigToml,
  describeRun,
  claudeResult,
  writeClaudeHooks,
  writeCodexHooks,
  makeTempDir,
  type HostRun,
  type RunClaudeOptions,
  type RunCodexOptions,
  type HookTable,
  type MatcherGroup,
  type CommandHandler,
} from './run.js';
export { assertCodexHookStdout, codexSchemaErrors, type CodexSchemaName } from './schemas.js';
