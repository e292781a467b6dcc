// A static walker over the compiled ESM import graph (dist/**.js). Used to prove that hot paths (the
// hooks, --version) never load heavy or forbidden packages, without running them.

import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export interface ImportGraph {
  /** Absolute paths of every project module reached, the entry included. */
  readonly files: ReadonlySet<string>;
  /**
   * Package names imported by those modules (`@scope/name` or `name`, or one of SEPARATE_ENTRY_POINTS;
   * `node:` built-ins excluded).
   */
  readonly packages: ReadonlySet<string>;
  /** For each package, one module that imports it (for error messages). */
  readonly importedBy: ReadonlyMap<string, string>;
}

export interface WalkOptions {
  /** Follow `import('…')` with a literal specifier too (default true). */
  readonly dynamic?: boolean;
}

/**
 * Packages the hook path must never load (DESIGN.md "Hooks", STYLE.md start-up costs). `zod` is the full
 * library; its tree-shakable `zod/mini` is allowed there and counts as a package of its own.
 */
export const HOOK_FORBIDDEN_PACKAGES = ['ink', 'react', 'dockerode', 'execa', 'zod'] as const;

const STATIC_RE = /(?:^|[;\s}])(?:import|export)\s*(?:type\s+)?(?:[\w*${}\s,]*?\s*from\s*)?['"]([^'"\n]+)['"]/g;
const DYNAMIC_RE = /\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g;

function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** Entry points of a package that the walker names on their own, apart from the package's main one. */
export const SEPARATE_ENTRY_POINTS: readonly string[] = ['zod/mini'];

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name` (but see SEPARATE_ENTRY_POINTS); undefined for node built-ins. */

export function packageName(specifier: string): string | undefined {
  if (specifier.startsWith('node:')) return undefined;
  if (SEPARATE_ENTRY_POINTS.includes(specifier)) return specifier;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The specifiers a compiled module imports: static and (literal) dynamic ones, separately. */
export function importsOf(file: string): { static: string[]; dynamic: string[] } {
  const source = stripComments(readFileSync(file, 'utf8'));
  return {
    static: [...source.matchAll(STATIC_RE)].map((m) => m[1]!),
    dynamic: [...source.matchAll(DYNAMIC_RE)].map((m) => m[1]!),
  };
}

/** Walks relative imports recursively from `entry` (a compiled .js file) and collects bare specifiers. */
export function walkImports(entry: string, options: WalkOptions = {}): ImportGraph {
  const files = new Set<string>();
  const packages = new Set<string>();
  const importedBy = new Map<string, string>();
  const queue = [path.resolve(entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const found = importsOf(file);
    for (const spec of options.dynamic === false ? found.static : [...found.static, ...found.dynamic]) {
      if (spec.startsWith('.') || spec.startsWith('/')) {
        queue.push(path.resolve(path.dirname(file), spec));
        continue;
      }
      const name = packageName(spec);
      if (name === undefined) continue;
      packages.add(name);
      if (!importedBy.has(name)) importedBy.set(name, file);
    }
  }
  return { files, packages, importedBy };
}

/** The forbidden packages a graph reaches, each with a module that imports it. */
export function forbiddenIn(graph: ImportGraph, forbidden: readonly string[] = HOOK_FORBIDDEN_PACKAGES): string[] {
  return forbidden.filter((p) => graph.packages.has(p)).map((p) => `${p} (imported by ${graph.importedBy.get(p)})`);
}

/** The compiled module a command-table entry loads, read from its `load` function's literal import. */
export function commandModuleFile(cliFile: string, load: () => unknown): string {
  const m = /import\(\s*['"]([^'"]+)['"]\s*\)/.exec(load.toString());
  if (!m) throw new Error(`command load() is not a literal import: ${load.toString()}`);
  return path.resolve(path.dirname(cliFile), m[1]!);
}

/**
 * The static import graph of the TypeScript modules under `dir` (type-only imports included: they name
 * a module as much as a value import does). Keys and targets are absolute .ts paths; a relative
 * specifier `./x.js` names `./x.ts`. Dynamic `import()` is left out: a module loaded lazily is
 * evaluated only after its loader finished, so naming the loader back cannot meet it half-initialised.
 */
export function sourceImportGraph(dir: string): Map<string, string[]> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(file)
      .static.filter((s) => s.startsWith('.'))
      .map((s) => path.resolve(path.dirname(file), s).replace(/\.js$/, '.ts'));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * Every import cycle of a graph, as its strongly connected components of more than one module (or a
 * module importing itself), each listed in a stable order (Tarjan's algorithm).
 */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}
