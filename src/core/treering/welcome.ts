// First-run onboarding (upstream tree-ring-memory-cli welcome.rs, 0.15): whether the memory root
// exists, the next useful commands, and with --init the store plus the project's adapter activation.
// Static output only (no animation); colour only on a terminal without NO_COLOR or TERM=dumb.

export interface WelcomeIntegration {
  harness_id: string;
  state: string;
  next_step: string;
}

export interface WelcomeInput {
  /** The root as the user gave it (printed back, like upstream). */
  root: string;
  initialized: boolean;
  initRequested: boolean;
  agentAwareness: { created: string[]; existing: string[] } | null;
  integrations: WelcomeIntegration[] | null;
}

const RESET = '\x1b[0m';
const BOLD = '\x1b[1m';
const TEAL = '\x1b[38;2;22;156;166m';
const PINK = '\x1b[38;2;239;65;103m';
const ORANGE = '\x1b[38;2;255;125;34m';
const YELLOW = '\x1b[38;5;220m';

function shellPath(p: string): string {
  return p.includes(' ') ? `'${p}'` : p;
}

/** Upstream's three next commands, against the given root. */
export function nextCommands(root: string): string[] {
  const r = shellPath(root);
  return [
    `tree-ring --root ${r} init`,
    `tree-ring --root ${r} remember "Use project-scoped recall before risky changes." --event-type lesson --scope project`,
    `tree-ring --root ${r} tui`,
  ];
}

export function welcomeDocument(w: WelcomeInput): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    ok: true,
    root: w.root,
    sqlite_path: `${w.root.replace(/\/+$/, '')}/memory.sqlite`,
    initialized: w.initialized,
    init_requested: w.initRequested,
    agent_awareness: w.agentAwareness,
  };
  if (w.integrations !== null) doc.integrations = w.integrations;
  doc.next = nextCommands(w.root);
  return doc;
}

export function colorEnabled(isTTY: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  return isTTY === true && env.NO_COLOR === undefined && env.TERM !== 'dumb';
}

export function welcomeText(w: WelcomeInput, color: boolean): string {
  const paint = (t: string, c: string) => (color ? `${c}${t}${RESET}` : t);
  const out: string[] = [
    `${paint('Tree ', TEAL)}${paint('Ring ', PINK)}${paint('Memory', ORANGE)}`,
    '',
    paint('Tree Ring Memory is ready.', BOLD),
  ];
  if (w.initialized && w.initRequested) out.push(`Project initialized at ${w.root}. Fresh memory can start in cambium.`);
  else if (w.initialized) out.push(`Memory root found at ${w.root}. You can recall or open the TUI now.`);
  else out.push(`No memory root yet at ${w.root}. Run init when you are ready.`);
  out.push('Local-first by default. Secret-like memory is blocked before storage.');
  if (w.agentAwareness) {
    out.push('', paint('Agent awareness', YELLOW));
    if (w.agentAwareness.created.length === 0) out.push('  Existing guidance found in the memory root.');
    else for (const p of w.agentAwareness.created) out.push(`  created ${p}`);
    out.push('  Read SKILL.md for agent behavior and CLI.md for commands.', '  Merge AGENTS.md guidance into the project root AGENTS.md for DOX-aware agents.');
  }
  if (w.integrations && w.integrations.length > 0) {
    out.push('', paint('Integrations', YELLOW));
    for (const i of w.integrations) out.push(`  ${i.harness_id}: ${i.state}`, `    next: ${i.next_step}`);
  }
  out.push('', paint('Next useful commands', YELLOW), ...nextCommands(w.root).map((c) => `  ${c}`));
  return `${out.join('\n')}\n`;
}
