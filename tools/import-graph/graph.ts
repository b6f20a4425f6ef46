import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Files (repository-relative, `/`-separated) and the files each one imports. */
export type ImportGraph = ReadonlyMap<string, ReadonlySet<string>>;

const RESOLVE = ['', '.ts', '.tsx', '.d.ts', '.js', '.mjs', '.cjs', '/index.ts', '/index.js'];
const JEST_LOADS = new Set(['mock', 'doMock', 'requireActual', 'requireMock']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : sources(path);
    return /\.(ts|tsx|js|mjs|cjs)$/.test(entry.name) ? [path] : [];
  });
}

/**
 * Every module a file names: `import`/`export … from` (type-only ones included), `import x =
 * require()`, `import('…')` as a value or a type, `require()`, and Jest's module loads.
 */
export function moduleSpecifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      found.push(node.moduleSpecifier.text);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression))
      found.push(node.moduleReference.expression.text);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      found.push(node.argument.literal.text);
    else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0])) {
      const callee = node.expression;
      const loads =
        callee.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(callee) && callee.text === 'require') ||
        (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'jest' && JEST_LOADS.has(callee.name.text));
      if (loads) found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The import graph of the source files under `dirs` (relative imports; a target outside `dirs` is kept as a node). */
export function importGraph(options: { root: string; dirs: readonly string[] }): ImportGraph {
  const toKey = (path: string) => relative(options.root, path).split(sep).join('/');
  const graph = new Map<string, Set<string>>();
  for (const file of options.dirs.flatMap((dir) => sources(join(options.root, dir)))) {
    const targets = new Set<string>();
    for (const spec of moduleSpecifiers(file, readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const base = resolve(dirname(file), spec);
      const target = RESOLVE.map((suffix) => base + suffix).find((p) => existsSync(p) && statSync(p).isFile());
      if (target) targets.add(toKey(target));
    }
    graph.set(toKey(file), targets);
  }
  return graph;
}

/** The graph with each file replaced by its group (files of no group are left out); no self-edges. */
export function grouped(graph: ImportGraph, groupOf: (file: string) => string | null): ImportGraph {
  const out = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = groupOf(file);
    if (from === null) continue;
    const edges = out.get(from) ?? new Set<string>();
    out.set(from, edges);
    for (const target of targets) {
      const to = groupOf(target);
      if (to !== null && to !== from) edges.add(to);
    }
  }
  return out;
}

/** The strongly connected parts of more than one node (or a node importing itself): each holds at least one cycle. */
export function tangles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      part.push(member);
    } while (member !== node);
    if (part.length > 1 || graph.get(node)?.has(node)) found.push(part.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/** A shortest cycle through the first node of a tangle, as the path `a → b → … → a`. */
export function shortestCycle(graph: ImportGraph, tangle: readonly string[]): string[] {
  const members = new Set(tangle);
  const start = tangle[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i];
    for (const to of [...(graph.get(node) ?? [])].sort()) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0])!);
        return [...path, start];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

const TEST_FILE = /(^|\/)test\/|\.test\.ts$/;

/** `libs/<name>`: a library; its tests are left out (a test may load a library above its own, e.g. the emulator for a provider's contract test). */
export const libraryOf = (file: string): string | null => (TEST_FILE.test(file) ? null : (/^libs\/[^/]+/.exec(file)?.[0] ?? null));

/**
 * Imports no file of a library may make, its tests included: the plugin SDK is what plugin code
 * loads, so it never pulls the engine in; the contract-test harness (libs/plugin-testing) depends
 * on both, and neither depends on it.
 */
export const FORBIDDEN_IMPORTS: readonly { from: string; to: string }[] = [
  { from: 'libs/plugins-sdk', to: 'libs/engine' },
  { from: 'libs/plugins-sdk', to: 'libs/plugin-testing' },
  { from: 'libs/engine', to: 'libs/plugin-testing' },
];

/** The imports of `graph` that break a rule, as `file → imported file`. */
export function forbiddenImports(graph: ImportGraph, rules: readonly { from: string; to: string }[] = FORBIDDEN_IMPORTS): string[] {
  const inside = (file: string, dir: string) => file.startsWith(dir + '/');
  return [...graph].flatMap(([file, targets]) =>
    [...targets].filter((t) => rules.some((r) => inside(file, r.from) && inside(t, r.to))).map((t) => `${file} → ${t}`),
  );
}

/**
 * A room of libs/engine (`libs/engine/<folder>`) or one of its top files (`libs/engine/engine.ts`);
 * tests are left out: they exercise rooms together, the layers are for the running code.
 */
export const engineRoomOf = (file: string): string | null => {
  if (!file.startsWith('libs/engine/') || TEST_FILE.test(file.slice('libs/engine/'.length))) return null;
  return /^libs\/engine\/[^/]+/.exec(file)![0];
};

export interface CycleReport {
  level: string;
  tangles: string[][];
  /** One cycle per tangle. */
  cycles: string[][];
}

/** The three checks: files of libs/ (tests included), libraries, rooms of libs/engine. */
export function cycleReports(graph: ImportGraph): CycleReport[] {
  const levels: [string, ImportGraph][] = [
    ['files of libs/', graph],
    ['libraries (libs/<name>)', grouped(graph, libraryOf)],
    ['rooms of libs/engine', grouped(graph, engineRoomOf)],
  ];
  return levels.map(([level, g]) => {
    const found = tangles(g);
    return { level, tangles: found, cycles: found.map((t) => shortestCycle(g, t)) };
  });
}

export function formatReports(reports: readonly CycleReport[]): string {
  return reports
    .map((r) =>
      [
        `${r.level}: ${r.tangles.length === 0 ? 'no cycle' : `${r.tangles.length} tangle(s)`}`,
        ...r.tangles.map((t, i) => `  ${t.length} nodes in a loop, e.g. ${r.cycles[i].join(' → ')}`),
      ].join('\n'),
    )
    .join('\n');
}
