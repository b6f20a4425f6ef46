import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cycleReports, forbiddenImports, importGraph, shortestCycle, tangles } from '../../tools/import-graph/graph';

/**
 * libs/ has no import loop (issue 28 item 16), type-only imports included: not between files,
 * not between libraries, not between the rooms of libs/engine; and the plugin SDK never imports the
 * engine or the contract-test harness. `npm run cycles` prints the same report.
 */
const root = join(__dirname, '..', '..');

describe('the import graph of libs/', () => {
  const graph = importGraph({ root, dirs: ['libs'] });

  it.each(cycleReports(graph).map((r) => [r.level, r] as const))('%s: no loop', (_level, report) => {
    expect(report.cycles.map((cycle) => cycle.join(' → '))).toEqual([]);
  });

  it('libs/plugins-sdk imports neither libs/engine nor libs/plugin-testing; libs/engine does not import libs/plugin-testing (tests included)', () => {
    expect(forbiddenImports(graph)).toEqual([]);
  });

  it('sees the imports the checks rely on (a graph that found nothing would pass them all)', () => {
    expect(graph.get('libs/engine/index.ts')).toContain('libs/engine/catalog/index.ts');
    expect(graph.get('libs/plugin-testing/harness.ts')).toContain('libs/engine/index.ts');
  });
});

describe('the cycle check', () => {
  let dir: string;
  const write = (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'covel-cycles-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('counts type-only imports, `import()` types, re-exports, require and jest.mock', () => {
    write({
      'libs/a/index.ts': "import type { B } from '../b';\nexport type A = B;\n",
      'libs/b/index.ts': "export type B = import('../c').C;\n",
      'libs/c/index.ts': "export { d } from './d';\nexport type C = string;\n",
      'libs/c/d.ts': "const e = require('../e');\nexport const d = e;\n",
      'libs/e/index.js': "jest.mock('../a');\nmodule.exports = 1;\n",
    });
    const graph = importGraph({ root: dir, dirs: ['libs'] });
    const [files] = cycleReports(graph);
    expect(files.cycles).toEqual([['libs/a/index.ts', 'libs/b/index.ts', 'libs/c/index.ts', 'libs/c/d.ts', 'libs/e/index.js', 'libs/a/index.ts']]);
  });

  it('finds a loop between the rooms of libs/engine that no two files close, and ignores tests there', () => {
    write({
      'libs/engine/catalog/catalog.ts': "import { toolNames } from '../tools/names';\nexport const catalog = toolNames;\n",
      'libs/engine/tools/names.ts': 'export const toolNames = [];\n',
      'libs/engine/tools/tool.ts': "import type { catalog } from '../catalog/catalog';\nexport type Tool = typeof catalog;\n",
      'libs/engine/turn/test/turn.test.ts': "import '../../catalog/catalog';\n",
      'libs/engine/catalog/test/catalog.test.ts': "import '../../turn/test/turn.test';\n",
    });
    const [files, , rooms] = cycleReports(importGraph({ root: dir, dirs: ['libs'] }));
    expect(files.cycles).toEqual([]);
    expect(rooms.cycles).toEqual([['libs/engine/catalog', 'libs/engine/tools', 'libs/engine/catalog']]);
  });

  it('a harness in the SDK that imports the engine: a library loop and a forbidden import', () => {
    write({
      'libs/plugins-sdk/harness.ts': "import { createEngine } from '../engine';\nexport const harness = createEngine;\n",
      'libs/engine/index.ts': "import type { Manifest } from '../plugins-sdk';\nexport const createEngine = (m: Manifest) => m;\n",
      'libs/plugins-sdk/index.ts': 'export type Manifest = string;\n',
    });
    const graph = importGraph({ root: dir, dirs: ['libs'] });
    const [files, libraries] = cycleReports(graph);
    expect(files.cycles).toEqual([]);
    expect(libraries.cycles).toEqual([['libs/engine', 'libs/plugins-sdk', 'libs/engine']]);
    expect(forbiddenImports(graph)).toEqual(['libs/plugins-sdk/harness.ts → libs/engine/index.ts']);
  });

  it('reports one shortest cycle per tangle', () => {
    const graph = new Map([
      ['a', new Set(['b', 'x'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a', 'b'])],
      ['x', new Set(['y'])],
      ['y', new Set(['x'])],
      ['z', new Set(['z'])],
      ['free', new Set(['a'])],
    ]);
    const found = tangles(graph);
    expect(found).toEqual([['a', 'b', 'c'], ['x', 'y'], ['z']]);
    expect(found.map((t) => shortestCycle(graph, t))).toEqual([
      ['a', 'b', 'c', 'a'],
      ['x', 'y', 'x'],
      ['z', 'z'],
    ]);
  });
});
