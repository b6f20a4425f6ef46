import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Production code (what the runtime image runs) never loads the offline provider emulator, test code,
 * the benchmarks or a devDependency (not installed in the image): the lint's boundary rule
 * (eslint.config.mjs) fails on such an import, and the emulator is loaded only by
 * libs/engine/startup/offline-emulator.ts, when a worker has a slot with no key.
 */
const root = join(__dirname, '..', '..');

interface Linted {
  filePath: string;
  messages: { ruleId: string | null; message: string }[];
}

/** Lints each snippet as if it were that file, with the repository's eslint.config.mjs (ESLint's Node API in a plain Node process). */
function lint(cases: readonly { code: string; filePath: string }[]): Linted[] {
  const script = `
    import { ESLint } from 'eslint';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const eslint = new ESLint({ cwd: process.cwd() });
    const out = [];
    for (const c of JSON.parse(input)) {
      const [result] = await eslint.lintText(c.code, { filePath: c.filePath });
      out.push({ filePath: c.filePath, messages: result.messages.map((m) => ({ ruleId: m.ruleId, message: m.message })) });
    }
    process.stdout.write(JSON.stringify(out));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, input: JSON.stringify(cases), encoding: 'utf8' }));
}

const BOUNDARY_RULES = new Set(['@typescript-eslint/no-restricted-imports', 'no-restricted-syntax']);
const boundaryErrors = (linted: Linted) => linted.messages.filter((m) => m.ruleId !== null && BOUNDARY_RULES.has(m.ruleId));

const STATIC_IMPORT = "import { ProviderEmulator } from '../emulator';\n\nexport const emulator = new ProviderEmulator();\n";
const RE_EXPORT = "export { replyBookScript } from '../emulator';\n";
const TYPE_IMPORT = "import type { ProviderEmulator } from '../emulator';\n\nexport type Running = ProviderEmulator | null;\n";
const INLINE_TYPE_IMPORT = "import { type ProviderEmulator } from '../emulator';\n\nexport type Running = ProviderEmulator | null;\n";
const DYNAMIC_IMPORT = "export const load = () => import('../emulator');\n";
const FROM_APPS = "import { ProviderEmulator } from '../../libs/emulator';\n\nexport const emulator = new ProviderEmulator();\n";
const TEST_SUPPORT = "import { dumpProjections } from '../../test/support/projection-dump';\n\nexport const dump = dumpProjections;\n";
const BENCH = "import { runEmberback } from '../bench/emberback-bench';\n\nexport const run = runEmberback;\n";
const SDK_HARNESS = "import { pluginHarness } from '../../libs/plugin-testing';\n\nexport const harness = pluginHarness;\n";
const DEV_PACKAGE = "import { chromium } from 'playwright-core';\n\nexport const browser = chromium;\n";
const DEV_PACKAGE_TYPES = "import type { Browser } from 'playwright-core';\n\nexport type Page = Browser;\n";
const DEV_PACKAGE_DYNAMIC = "export const pty = () => import('@lydell/node-pty');\n";
const REQUIRE_BENCH = "module.exports = require('../bench/run');\n";

describe('the production boundary (lint)', () => {
  const cases = [
    // production files: errors
    { code: STATIC_IMPORT, filePath: 'libs/engine/turn/step.ts', expect: /offline-emulator\.ts/ },
    { code: RE_EXPORT, filePath: 'libs/engine/reply-books.ts', expect: /offline-emulator\.ts/ },
    { code: DYNAMIC_IMPORT, filePath: 'libs/engine/some-loader.ts', expect: /offline-emulator\.ts/ },
    { code: FROM_APPS, filePath: 'apps/api/health.ts', expect: /offline-emulator\.ts/ },
    { code: TEST_SUPPORT, filePath: 'libs/events/dump.ts', expect: /test code/ },
    { code: BENCH, filePath: 'tools/report.ts', expect: /benchmarks/ },
    { code: REQUIRE_BENCH, filePath: 'tools/report.js', expect: /benchmarks/ },
    { code: SDK_HARNESS, filePath: 'plugins/codex/entry.ts', expect: /plugin SDK test harness/ },
    { code: DEV_PACKAGE, filePath: 'apps/api/inspector/shot.ts', expect: /devDependency/ },
    { code: DEV_PACKAGE_DYNAMIC, filePath: 'apps/play/terminal-size.ts', expect: /devDependency/ },
    // allowed: types only (erased at compile time), the one door, tests, the emulator itself, benchmarks
    { code: TYPE_IMPORT, filePath: 'libs/engine/engine-types.ts', expect: null },
    { code: INLINE_TYPE_IMPORT, filePath: 'libs/engine/engine-types.ts', expect: null },
    { code: DYNAMIC_IMPORT, filePath: 'libs/engine/startup/offline-emulator.ts', expect: null },
    { code: STATIC_IMPORT, filePath: 'libs/engine/test/harness.ts', expect: null },
    { code: STATIC_IMPORT, filePath: 'libs/engine/turn-step.test.ts', expect: null },
    { code: FROM_APPS, filePath: 'test/unit/emulator.test.ts', expect: null },
    { code: TEST_SUPPORT, filePath: 'test/integration/dump.test.ts', expect: null },
    { code: STATIC_IMPORT, filePath: 'libs/emulator/more.ts', expect: null },
    { code: SDK_HARNESS, filePath: 'libs/plugin-testing/more.ts', expect: null },
    { code: BENCH, filePath: 'bench/more.ts', expect: null },
    { code: DEV_PACKAGE_TYPES, filePath: 'apps/api/inspector/shot.ts', expect: null },
    { code: DEV_PACKAGE, filePath: 'test/unit/inspector-shot.test.ts', expect: null },
    { code: DEV_PACKAGE_DYNAMIC, filePath: 'test/support/pty.ts', expect: null },
  ];
  const linted = lint(cases.map(({ code, filePath }) => ({ code, filePath })));

  it.each(cases.map((c, i) => [c.filePath, c.code.split('\n')[0], c.expect, linted[i]] as const))('%s: %s', (_file, _line, expected, result) => {
    const errors = boundaryErrors(result);
    if (expected === null) expect(errors).toEqual([]);
    else expect(errors).toEqual([expect.objectContaining({ message: expect.stringMatching(expected) })]);
  });
});

describe('the production boundary (at run time)', () => {
  it('an API process and a worker with a provider key never load libs/emulator; a worker without a key loads it', () => {
    // one process, three engines in turn (in-memory PGlite): which modules has Node loaded after each?
    const script = `
      const { sep } = require('node:path');
      const { createEngine, loadConfig } = require('./libs/engine');
      const loaded = () => Object.keys(require.cache).some((f) => f.includes(sep + 'libs' + sep + 'emulator' + sep));
      const start = async (role, env) => {
        const config = { ...loadConfig({ ...process.env, ...env }), database: { kind: 'pglite' } };
        const engine = await createEngine(config, role);
        const emulator = engine.emulator !== null;
        await engine.close();
        return { role, emulator, emulatorLoaded: loaded() };
      };
      (async () => {
        const out = [];
        out.push(await start('api', {}));
        out.push(await start('worker', { OPENAI_API_KEY: 'sk-boundary-test' }));
        out.push(await start('worker', {}));
        process.stdout.write(JSON.stringify(out));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const env: NodeJS.ProcessEnv = { ...process.env, COVEL_LOG_LEVEL: 'error' };
    for (const key of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'COVEL_EMULATOR_URL', 'DATABASE_URL', 'REDIS_URL']) delete env[key];
    const out = execFileSync(process.execPath, ['-r', './tools/register.js', '-e', script], { cwd: root, env, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual([
      { role: 'api', emulator: false, emulatorLoaded: false },
      { role: 'worker', emulator: false, emulatorLoaded: false },
      { role: 'worker', emulator: true, emulatorLoaded: true },
    ]);
  });
});
