// The terminal console of `tree-ring tui` (ink): ring counts, the newest memories, a detail pane and
// recall search, refreshed every tick. Loaded only by `tui` after its terminal check; never on a hook
// or recall path. Views are pure functions of their props and state, so tests render them by frame.

import { Box, Text, render, useApp, useInput, type Key } from 'ink';
import { useEffect, useReducer } from 'react';
import { RINGS } from '../../core/treering/model.js';
import type { TuiMemory, TuiSnapshot } from '../../core/treering/tui-data.js';

const RING_COLORS: Record<string, string> = { cambium: 'cyan', outer: 'magenta', inner: 'yellow', heartwood: 'green', scar: 'red', seed: 'blue' };
const LIST_ROWS = 10;
const ringColor = (r: string): string => RING_COLORS[r] ?? 'white';

export interface TuiProps {
  /** The root as the user gave it (shown in the header). */
  root: string;
  load: () => TuiSnapshot;
  search: (query: string) => TuiMemory[];
  tickMs: number;
}

export function RingBar({ rings }: { rings: Record<string, number> }) {
  return (
    <Box>
      {RINGS.map((r, i) => (
        <Box key={r} marginRight={2}>
          <Text color={ringColor(r)}>{`${i + 1} ${r} ${rings[r] ?? 0}`}</Text>
        </Box>
      ))}
    </Box>
  );
}

export function MemoryList({ items, selected }: { items: readonly TuiMemory[]; selected: number }) {
  if (items.length === 0) return <Text dimColor>No memories to show.</Text>;
  const start = Math.max(0, Math.min(selected - Math.floor(LIST_ROWS / 2), items.length - LIST_ROWS));
  return (
    <Box flexDirection="column">
      {items.slice(start, start + LIST_ROWS).map((m, i) => {
        const here = start + i === selected;
        return (
          <Text key={m.id} inverse={here} wrap="truncate-end">
            {`${here ? '>' : ' '} `}
            <Text color={ringColor(m.ring)}>{m.ring.padEnd(9)}</Text>
            {` ${m.summary}`}
          </Text>
        );
      })}
    </Box>
  );
}

export function MemoryDetail({ memory }: { memory: TuiMemory | undefined }) {
  if (!memory) return null;
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>{memory.id}</Text>
      <Text>{`${memory.ring} · ${memory.scope} · ${memory.event_type}${memory.project ? ` · project ${memory.project}` : ''} · ${memory.created_at}`}</Text>
      <Text wrap="wrap">{memory.summary}</Text>
    </Box>
  );
}

interface TuiState {
  snapshot: TuiSnapshot;
  selected: number;
  ring: string | null;
  mode: 'browse' | 'search';
  query: string;
  results: { query: string; items: TuiMemory[] } | null;
  quit: boolean;
}

type TuiAction = { type: 'refresh'; snapshot: TuiSnapshot } | { type: 'key'; input: string; key: Key };

function visible(s: TuiState): TuiMemory[] {
  const source = s.results ? s.results.items : s.snapshot.recent;
  return s.ring ? source.filter((m) => m.ring === s.ring) : source;
}

/**
 * Every key goes through one reducer, so a key is always read against the state it arrives in (a
 * handler captured by an earlier render would see an older mode).
 */
function reducer(search: (q: string) => TuiMemory[], load: () => TuiSnapshot) {
  return (s: TuiState, a: TuiAction): TuiState => {
    if (a.type === 'refresh') return { ...s, snapshot: a.snapshot };
    const { input, key } = a;
    if (s.mode === 'search') {
      if (key.return) {
        const q = s.query.trim();
        return { ...s, mode: 'browse', selected: 0, results: q === '' ? null : { query: q, items: search(q) } };
      }
      if (key.escape) return { ...s, mode: 'browse' };
      if (key.backspace || key.delete) return { ...s, query: s.query.slice(0, -1) };
      if (!key.ctrl && !key.meta && input) return { ...s, query: s.query + input };
      return s;
    }
    const items = visible(s);
    const current = Math.min(s.selected, Math.max(0, items.length - 1));
    if (input === 'q' || key.escape || (key.ctrl && input === 'c')) return { ...s, quit: true };
    if (key.downArrow || input === 'j') return { ...s, selected: Math.min(current + 1, Math.max(0, items.length - 1)) };
    if (key.upArrow || input === 'k') return { ...s, selected: Math.max(current - 1, 0) };
    if (input === '/') return { ...s, mode: 'search', query: '' };
    if (input === 'c') return { ...s, results: null, selected: 0 };
    if (input === '0') return { ...s, ring: null, selected: 0 };
    if (/^[1-6]$/.test(input)) return { ...s, ring: RINGS[Number(input) - 1]!, selected: 0 };
    if (input === 'r') return { ...s, snapshot: load() };
    return s;
  };
}

export function TuiApp({ root, load, search, tickMs }: TuiProps) {
  const { exit } = useApp();
  const [s, dispatch] = useReducer(reducer(search, load), undefined, (): TuiState => ({ snapshot: load(), selected: 0, ring: null, mode: 'browse', query: '', results: null, quit: false }));

  useEffect(() => {
    const timer = setInterval(() => dispatch({ type: 'refresh', snapshot: load() }), tickMs);
    return () => clearInterval(timer);
  }, [load, tickMs]);
  useEffect(() => {
    if (s.quit) exit();
  }, [s.quit, exit]);
  useInput((input, key) => dispatch({ type: 'key', input, key }));

  const items = visible(s);
  const current = Math.min(s.selected, Math.max(0, items.length - 1));
  return (
    <Box flexDirection="column">
      <Text bold>{`Tree Ring Memory · ${root} · ${s.snapshot.initialized ? `${s.snapshot.total} memories` : 'no store yet (run tree-ring init)'}`}</Text>
      <RingBar rings={s.snapshot.rings} />
      <Text dimColor>{`${s.results ? `recall "${s.results.query}": ${s.results.items.length} results` : 'newest memories'}${s.ring ? ` · ring ${s.ring}` : ''}`}</Text>
      <MemoryList items={items} selected={current} />
      <MemoryDetail memory={items[current]} />
      {s.mode === 'search' ? <Text>{`search: ${s.query}_`}</Text> : <Text dimColor>↑/↓ or j/k move · / search · c clear search · 1-6 ring · 0 all rings · r refresh · q quit</Text>}
    </Box>
  );
}

/** Runs the console on the process's terminal until the user quits. */
export async function runTui(props: TuiProps): Promise<void> {
  const instance = render(<TuiApp {...props} />, { exitOnCtrlC: false });
  await instance.waitUntilExit();
}
