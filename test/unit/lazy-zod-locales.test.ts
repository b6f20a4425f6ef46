import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// tools/register.js puts a lazy index of zod's locales in the module cache (tools/lazy-zod-locales.js):
// the same names giving the same locale functions, each locale module loaded when read.
const ROOT = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { lazyLocalesModule } = require(join(ROOT, 'tools', 'lazy-zod-locales.js')) as { lazyLocalesModule(root: string): { exports: object } | null };

/** What `script` prints (JSON) in a Node process started as the engine's are (`-r ./tools/register.js`). */
function inChild(script: string): unknown {
  return JSON.parse(execFileSync(process.execPath, ['-r', './tools/register.js', '-e', script], { cwd: ROOT, encoding: 'utf8' }));
}

describe('tools/lazy-zod-locales.js', () => {
  it('under tools/register.js, zod loads no locale but English, and z.locales gives every locale of the real index, as its module exports it', () => {
    const real = Object.keys(require('zod/v4/locales') as object).sort(); // eslint-disable-line @typescript-eslint/no-require-imports
    const seen = inChild(
      [
        "const { z, locales, config } = require('zod');",
        "const loaded = () => Object.keys(require.cache).filter((f) => /node_modules\\/zod\\/v4\\/locales\\//.test(f)).map((f) => f.split('/').pop()).sort();",
        'const atStart = loaded();',
        'config(locales.fr());',
        'const message = z.string().safeParse(1).error.issues[0].message;',
        'const after = loaded();',
        // the real index, loaded now in the lazy one's place: the same locale modules, so the same functions
        "const index = require('path').join(require('path').dirname(require.resolve('zod')), 'v4', 'locales', 'index.cjs');",
        'delete require.cache[index];',
        'const real = require(index);',
        'const same = real !== locales && Object.keys(real).every((name) => typeof real[name] === "function" && locales[name] === real[name]);',
        'process.stdout.write(JSON.stringify({ atStart, names: Object.keys(locales).sort(), same, frozen: Object.isFrozen(locales), message, after }));',
      ].join('\n'),
    );
    expect(seen).toEqual({
      atStart: ['en.cjs', 'index.cjs'],
      names: real,
      same: true,
      frozen: true,
      message: 'Entrée invalide : chaîne de caractères attendu, nombre reçu',
      after: ['en.cjs', 'fr.cjs', 'index.cjs'],
    });
  });

  it('installs nothing for an index in another form (zod then loads as it comes)', () => {
    const root = mkdtempSync(join(tmpdir(), 'covel-zod-'));
    try {
      const zod = join(root, 'node_modules', 'zod');
      const real = readFileSync(join(dirname(require.resolve('zod')), 'v4', 'locales', 'index.cjs'), 'utf8');
      mkdirSync(join(zod, 'v4', 'locales'), { recursive: true });
      writeFileSync(join(zod, 'package.json'), JSON.stringify({ name: 'zod', main: 'index.cjs' }));
      writeFileSync(join(zod, 'index.cjs'), '');
      writeFileSync(join(zod, 'v4', 'locales', 'index.cjs'), real);
      expect(lazyLocalesModule(root)).not.toBeNull();
      // one more require the lazy index would not make
      writeFileSync(join(zod, 'v4', 'locales', 'index.cjs'), `${real}\nrequire("./extra.cjs");\n`);
      expect(lazyLocalesModule(root)).toBeNull();
      writeFileSync(join(zod, 'v4', 'locales', 'index.cjs'), real.replace(/__importDefault\((\w+)\)\.default/, '$1.other'));
      expect(lazyLocalesModule(root)).toBeNull();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
