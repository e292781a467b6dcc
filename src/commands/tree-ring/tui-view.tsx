// The terminal console of `tree-ring tui` (ink): ring counts, the newest memories, a detail pane and
// recall search, refreshed every tick. Loaded only by `tui` after its terminal check; never on a hook
// or recall path. Views are pure functions of their props and state, so tests render them by frame.

import { Box, Text, render, useApp, useInput } from 'ink';
import { useEffect, useState } from 'react';
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

export function TuiApp({ root, load, search, tickMs }: TuiProps) {
  const { exit } = useApp();
  const [snapshot, setSnapshot] = useState<TuiSnapshot>(() => load());
  const [selected, setSelected] = useState(0);
  const [ring, setRing] = useState<string | null>(null);
  const [mode, setMode] = useState<'browse' | 'search'>('browse');
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<{ query: string; items: TuiMemory[] } | null>(null);

  useEffect(() => {
    const timer = setInterval(() => setSnapshot(load()), tickMs);
    return () => clearInterval(timer);
  }, [load, tickMs]);

  const source = results ? results.items : snapshot.recent;
  const items = ring ? source.filter((m) => m.ring === ring) : source;
  const current = Math.min(selected, Math.max(0, items.length - 1));

  useInput((input, key) => {
    if (mode === 'search') {
      if (key.return) {
        const q = query.trim();
        setResults(q === '' ? null : { query: q, items: search(q) });
        setSelected(0);
        setMode('browse');
      } else if (key.escape) {
        setMode('browse');
      } else if (key.backspace || key.delete) {
        setQuery((q) => q.slice(0, -1));
      } else if (!key.ctrl && !key.meta && input) {
        setQuery((q) => q + input);
      }
      return;
    }
    if (input === 'q' || key.escape || (key.ctrl && input === 'c')) exit();
    else if (key.downArrow || input === 'j') setSelected(Math.min(current + 1, Math.max(0, items.length - 1)));
    else if (key.upArrow || input === 'k') setSelected(Math.max(current - 1, 0));
    else if (input === '/') {
      setQuery('');
      setMode('search');
    } else if (input === 'c') {
      setResults(null);
      setSelected(0);
    } else if (input === '0') {
      setRing(null);
      setSelected(0);
    } else if (/^[1-6]$/.test(input)) {
      setRing(RINGS[Number(input) - 1]!);
      setSelected(0);
    } else if (input === 'r') setSnapshot(load());
  });

  return (
    <Box flexDirection="column">
      <Text bold>{`Tree Ring Memory · ${root} · ${snapshot.initialized ? `${snapshot.total} memories` : 'no store yet (run tree-ring init)'}`}</Text>
      <RingBar rings={snapshot.rings} />
      <Text dimColor>{`${results ? `recall "${results.query}": ${results.items.length} results` : 'newest memories'}${ring ? ` · ring ${ring}` : ''}`}</Text>
      <MemoryList items={items} selected={current} />
      <MemoryDetail memory={items[current]} />
      {mode === 'search' ? <Text>{`search: ${query}_`}</Text> : <Text dimColor>↑/↓ or j/k move · / search · c clear search · 1-6 ring · 0 all rings · r refresh · q quit</Text>}
    </Box>
  );
}

/** Runs the console on the process's terminal until the user quits. */
export async function runTui(props: TuiProps): Promise<void> {
  const instance = render(<TuiApp {...props} />, { exitOnCtrlC: false });
  await instance.waitUntilExit();
}
