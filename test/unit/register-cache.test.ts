import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// tools/register.js keeps each compiled file in a transform cache shared by every process: an
// entry is used only for the same source, path and options, and never when damaged.
const ROOT = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { transformCache } = require(join(ROOT, 'tools', 'register-cache.js')) as {
  transformCache(
    directory: string,
    salt: string,
  ): {
    get(filename: string, source: string): { code: string; map: string | undefined } | undefined;
    set(filename: string, source: string, code: string, map: string | undefined): void;
  };
};

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'covel-register-cache-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entries = (root: string): string[] =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));

describe('tools/register-cache.js', () => {
  it('gives back what was stored, for the same source, path and salt only', () => {
    const cache = transformCache(dir, 'salt');
    cache.set('/a.ts', 'const a = 1;', 'var a = 1; // é 🦊', '{"mappings":"AAAA"}');
    cache.set('/b.ts', 'const b = 1;', 'var b = 1;', undefined);
    expect(cache.get('/a.ts', 'const a = 1;')).toEqual({ code: 'var a = 1; // é 🦊', map: '{"mappings":"AAAA"}' });
    expect(cache.get('/b.ts', 'const b = 1;')).toEqual({ code: 'var b = 1;', map: undefined });
    expect(cache.get('/a.ts', 'const a = 2;')).toBeUndefined();
    expect(cache.get('/c.ts', 'const a = 1;')).toBeUndefined();
    expect(transformCache(dir, 'other options').get('/a.ts', 'const a = 1;')).toBeUndefined();
    expect(entries(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('never uses a damaged or cut entry', () => {
    const cache = transformCache(dir, 'salt');
    cache.set('/a.ts', 'const a = 1;', 'var a = 1;', '{}');
    const [file] = entries(dir);
    const whole = readFileSync(file!, 'utf8');
    writeFileSync(file!, whole.replace('var a = 1;', 'var a = 2;'));
    expect(cache.get('/a.ts', 'const a = 1;')).toBeUndefined();
    writeFileSync(file!, whole.slice(0, whole.length - 1));
    expect(cache.get('/a.ts', 'const a = 1;')).toBeUndefined();
    writeFileSync(file!, '');
    expect(cache.get('/a.ts', 'const a = 1;')).toBeUndefined();
  });

  it('node -r tools/register.js fills it on demand, runs from it, and compiles again past a damaged entry', () => {
    const cacheDir = join(dir, 'cache');
    const script = join(dir, 'script.ts');
    writeFileSync(script, 'const greet = (name: string): string => `hello ${name}`;\nconsole.log(greet("world"), new Error("x").stack!.split("\\n")[1]);\n');
    const run = () =>
      execFileSync(process.execPath, ['-r', './tools/register.js', script], {
        cwd: ROOT,
        env: { ...process.env, SWC_NODE_CACHE_DIR: cacheDir },
        encoding: 'utf8',
      });
    const first = run();
    // the stack names the TypeScript line (the source map is kept with the entry)
    expect(first).toMatch(/^hello world .*script\.ts:2:/);
    const [file] = entries(cacheDir);
    expect(readFileSync(file!, 'utf8')).toContain('hello');
    expect(run()).toBe(first);
    writeFileSync(file!, readFileSync(file!, 'utf8').replace('hello', 'HELLO'));
    expect(run()).toBe(first);
  });
});
