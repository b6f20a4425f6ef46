import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const TESTING = join(ROOT, 'libs', 'plugin-testing');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' || d.name.startsWith('.') ? [] : sources(path);
    return d.name.endsWith('.ts') ? [path] : [];
  });
}

const specifiers = (file: string) => [...readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);
const isTest = (file: string) => file.endsWith('.test.ts') || file.split(sep).includes('test');

describe('the harness stays out of running code', () => {
  it('only test files import libs/plugin-testing (not the engine, not the SDK entry, not a plugin entry)', () => {
    const offenders = [...sources(join(ROOT, 'libs')), ...sources(join(ROOT, 'apps')), ...sources(join(ROOT, 'plugins')), ...sources(join(ROOT, 'tools'))]
      .filter((f) => !f.startsWith(TESTING + sep) && !isTest(f))
      .filter((f) => specifiers(f).some((s) => /(^|\/)plugin-testing(\/|$)/.test(s)))
      .map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });

  it('the SDK pulls no engine in: no file of libs/plugins-sdk imports libs/engine, libs/events, the emulator or this harness', () => {
    const sdk = join(ROOT, 'libs', 'plugins-sdk');
    const offenders = sources(sdk)
      .filter((f) => !isTest(f))
      .filter((f) => specifiers(f).some((s) => /^\.\.\/(engine|events|emulator|plugin-testing)(\/|$)/.test(s)))
      .map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });
});
