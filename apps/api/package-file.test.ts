import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { INSPECTOR_ASSETS, inspectorFile } from './inspector/inspector-page';
import { DOCS_ASSETS, swaggerUiFile } from './openapi/docs-page';
import { packageDirectory, packageFile } from './package-file';

const ROOT = join(__dirname, '..', '..');

describe('files served from installed packages', () => {
  it('every inspector asset and every Swagger UI file is an existing, non-empty file', () => {
    for (const asset of INSPECTOR_ASSETS) expect(statSync(inspectorFile(asset)).size).toBeGreaterThan(0);
    for (const asset of DOCS_ASSETS) if (asset !== 'init.js') expect(statSync(swaggerUiFile(asset)).size).toBeGreaterThan(0);
  });

  it('finds a package whose `exports` do not export ./package.json (htm)', () => {
    const dir = packageDirectory('htm');
    expect(existsSync(join(dir, 'package.json'))).toBe(true);
    expect(packageFile('htm', 'dist/htm.mjs')).toBe(join(dir, 'dist', 'htm.mjs'));
  });

  // Jest's resolver ignores `exports` restrictions: the process users start is the one to ask
  it('under plain Node with the register hook (what `npm start` runs), every asset resolves to an existing file', () => {
    const script = `
      const { existsSync } = require('node:fs');
      let refused = null;
      try { require.resolve('htm/package.json'); } catch (e) { refused = e.code; }
      const { INSPECTOR_ASSETS, inspectorFile } = require('./apps/api/inspector/inspector-page.ts');
      const { DOCS_ASSETS, swaggerUiFile } = require('./apps/api/openapi/docs-page.ts');
      const files = [...INSPECTOR_ASSETS.map(inspectorFile), ...DOCS_ASSETS.filter((a) => a !== 'init.js').map(swaggerUiFile)];
      process.stdout.write(JSON.stringify({ refused, files: files.map((f) => [f, existsSync(f)]) }));`;
    const { refused, files: out } = JSON.parse(
      execFileSync(process.execPath, ['-r', './tools/register.js', '-e', script], { cwd: ROOT, encoding: 'utf8' }),
    ) as {
      refused: string | null;
      files: [string, boolean][];
    };
    // the call the inspector used to make: Node refuses it (htm's `exports` do not list ./package.json)
    expect(refused).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
    expect(out).toHaveLength(INSPECTOR_ASSETS.length + DOCS_ASSETS.length - 1);
    expect(out.filter(([, exists]) => !exists)).toEqual([]);
  });

  it('says which package or file is missing', () => {
    expect(() => packageDirectory('no-such-package-covel')).toThrow(/package no-such-package-covel is not installed/);
    expect(() => packageFile('htm', 'dist/missing.mjs')).toThrow(/package htm \(.*\) has no file dist\/missing\.mjs/);
  });
});
