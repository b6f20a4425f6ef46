import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// tools/register.js puts rxjs's one-file bundle in the place of its CommonJS entries (tools/rxjs-bundle.js);
// test/unit/lazy-packages.test.ts checks that an engine then loads no other file of rxjs.
const ROOT = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { rxjsPaths } = require(join(ROOT, 'tools', 'rxjs-bundle.js')) as {
  rxjsPaths(root: string): { index: string; operators: string; bundle: string } | null;
};

describe('tools/rxjs-bundle.js', () => {
  it('under tools/register.js, rxjs and rxjs/operators are the bundle and its operators, loaded at the first require, with every name of the CommonJS build', () => {
    const paths = rxjsPaths(ROOT)!;
    // the CommonJS build's names, read in this process (Jest loads its own copy)
    /* eslint-disable @typescript-eslint/no-require-imports */
    const names = { rxjs: Object.keys(require('rxjs') as object), operators: Object.keys(require('rxjs/operators') as object) };
    /* eslint-enable @typescript-eslint/no-require-imports */
    const script = [
      "const rxjsFiles = () => Object.keys(require.cache).filter((f) => f.includes('/node_modules/rxjs/'));",
      // the two entries are in the module cache from the start, the bundle only once required
      "const before = rxjsFiles().filter((f) => f.includes('/dist/bundles/'));",
      "const rxjs = require('rxjs');",
      "const operators = require('rxjs/operators');",
      `const bundle = require(${JSON.stringify(paths.bundle)});`,
      `const names = ${JSON.stringify(names)};`,
      // a pipe through an operator of each entry
      'let seen; rxjs.of(1, 2).pipe(operators.map((n) => n * 2), rxjs.toArray()).subscribe((v) => (seen = v));',
      'process.stdout.write(JSON.stringify({ before, after: rxjsFiles().sort(), same: rxjs === bundle && operators === bundle.operators,',
      '  missing: [...names.rxjs.filter((n) => !(n in rxjs)), ...names.operators.filter((n) => !(n in operators))], seen }));',
    ].join('\n');
    const out = JSON.parse(execFileSync(process.execPath, ['-r', './tools/register.js', '-e', script], { cwd: ROOT, encoding: 'utf8' }));
    expect(out).toEqual({ before: [], after: [paths.bundle, paths.index, paths.operators].sort(), same: true, missing: [], seen: [2, 4] });
  });

  it('installs nothing for an rxjs other than 7 or without its bundle (rxjs then loads as it comes)', () => {
    const root = mkdtempSync(join(tmpdir(), 'covel-rxjs-'));
    try {
      const dir = join(root, 'node_modules', 'rxjs');
      mkdirSync(join(dir, 'dist', 'cjs', 'operators'), { recursive: true });
      const manifest = (version: string) =>
        JSON.stringify({
          name: 'rxjs',
          version,
          main: './dist/cjs/index.js',
          exports: { '.': './dist/cjs/index.js', './operators': './dist/cjs/operators/index.js' },
        });
      writeFileSync(join(dir, 'dist', 'cjs', 'index.js'), '');
      writeFileSync(join(dir, 'dist', 'cjs', 'operators', 'index.js'), '');
      writeFileSync(join(dir, 'package.json'), manifest('7.8.2'));
      expect(rxjsPaths(root)).toBeNull();
      mkdirSync(join(dir, 'dist', 'bundles'));
      writeFileSync(join(dir, 'dist', 'bundles', 'rxjs.umd.js'), '');
      expect(rxjsPaths(root)).not.toBeNull();
      writeFileSync(join(dir, 'package.json'), manifest('8.0.0'));
      expect(rxjsPaths(root)).toBeNull();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
