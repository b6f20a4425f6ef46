import { spawn } from 'node:child_process';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');

/** What a variable of the parent could switch on in the child: Redis, PostgreSQL, a real provider, tracing. */
const SWITCHES = /^(DATABASE_URL|REDIS_URL|COVEL_EMULATOR_URL|OTEL_.*|.*_API_KEY)$/;

/** The files (relative to the repository) a fresh Node process has loaded once `script` has run, as `npm start` runs TypeScript. */
async function loadedBy(script: string): Promise<string[]> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SWITCHES.test(name)));
  const child = spawn(process.execPath, ['-r', './tools/register.js', '-e', script], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the child exited with ${String(code)}:\n${stderr}`);
  return (JSON.parse(stdout) as string[]).map((file) => relative(root, file));
}

/**
 * The packages and modules an engine loads only when it uses them: every engine process (npm
 * start, a worker, each of the ~190 test files that start one under Jest) would otherwise pay for
 * loading them, for a configuration it does not have.
 */
describe('what an embedded engine loads', () => {
  it('started and serving (PGlite, in-process queue, emulator, its own logger): nothing of Redis, PostgreSQL, the provider SDKs, tracing, pino, multer, the zod locales, the CommonJS build of rxjs, the migrations or the OpenAPI document', async () => {
    // started as the tests start one (a migrated database in memory, a logger given), its files read while it runs
    const script = [
      "const { startEmbedded } = require('./test/support/embedded');",
      'startEmbedded({}, undefined, { onDisk: false }).then(async (covel) => {',
      "  const health = await fetch(covel.baseUrl + '/health');",
      '  if (!health.ok) throw new Error(`health: ${health.status}`);',
      '  const files = Object.keys(require.cache);',
      '  await covel.stop();',
      '  process.stdout.write(JSON.stringify(files));',
      '});',
    ].join('\n');
    const loaded = await loadedBy(script);
    expect(loaded).toContain(join('libs', 'engine', 'engine.ts'));
    expect(loaded).toContain(join('apps', 'api', 'openapi', 'docs.controller.ts'));
    const unused = {
      // no REDIS_URL: the in-process queue, delta bus, provider health and rate limits
      redis: /node_modules\/(ioredis|bullmq)\//,
      // no DATABASE_URL: PGlite
      postgres: /node_modules\/pg\//,
      // no provider key, no model call yet: the emulator behind adapters made at the first call
      providers: /node_modules\/(openai|@anthropic-ai\/sdk|@google\/genai|gpt-tokenizer)\//,
      // no OTLP endpoint: nothing registered with @opentelemetry/api (prom-client's index would load it too)
      tracing: /node_modules\/@opentelemetry\/|node_modules\/prom-client\/index\.js$/,
      // a logger given
      pino: /node_modules\/pino\//,
      // a database with every migration: their names are read, not their modules
      migrations: /^migrations\/0/,
      // no upload yet: multer (through Nest's FileInterceptor) loads at the first multipart world import
      multer: /node_modules\/(multer|busboy)\//,
      // started under tools/register.js: zod's locales but English load when z.locales reads them (tools/lazy-zod-locales.js)
      zodLocales: /node_modules\/zod\/v4\/locales\/(?!(index|en)\.cjs$)/,
      // rxjs is its one-file bundle under tools/register.js (tools/rxjs-bundle.js): no file of the CommonJS build but the two entries it stands for
      rxjsCommonJs: /node_modules\/rxjs\/dist\/(?!bundles\/rxjs\.umd\.js$|cjs\/index\.js$|cjs\/operators\/index\.js$)/,
      // read only at GET /openapi.json and by the wire tests
      schemas: /^apps\/api\/openapi\/(document|routes|schemas)\.ts$|^libs\/providers\/wire-shapes-/,
    };
    for (const [what, pattern] of Object.entries(unused)) expect({ what, files: loaded.filter((file) => pattern.test(file)) }).toEqual({ what, files: [] });
  }, 60_000);
});
