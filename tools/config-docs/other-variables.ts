/**
 * Variables not read through one of the config schemas (libs/engine/config/config.ts `EngineEnv`,
 * libs/providers `ProviderEnv`, libs/telemetry `TelemetryEnv`), listed by hand with who reads
 * them. `test/unit/config-docs.test.ts` fails when code reads a variable that is in neither.
 */
export interface OtherVariable {
  name: string;
  /** As the reader applies it; null: none. */
  default: string | null;
  description: string;
}

export interface OtherVariableGroup {
  title: string;
  /** Who reads them (a file or a command). */
  readBy: string;
  variables: OtherVariable[];
}

export const OTHER_VARIABLES: readonly OtherVariableGroup[] = [
  {
    title: 'Play client',
    readBy:
      "`npm run play` (`apps/play/`; of the engine's variables above it reads `PORT` and `COVEL_DATA_DIR` only, checked as the engine checks them: another one set wrong does not stop it)",
    variables: [
      {
        name: 'COVEL_URL',
        default: 'the URL in `$COVEL_DATA_DIR/engine-url`, else `http://127.0.0.1:$PORT`',
        description: 'The engine to play against (`npm start` on the embedded default writes its URL to `$COVEL_DATA_DIR/engine-url`).',
      },
      {
        name: 'COVEL_API_KEY',
        default: 'the embedded dev key',
        description: 'A tenant API key; default: the key `npm start` wrote to `$COVEL_DATA_DIR/dev-api-key`.',
      },
      {
        name: 'COVEL_WORLD',
        default: '`emberback`',
        description: "The world new sessions start in: a built-in world's name or the id of one of the tenant's; empty for none.",
      },
      { name: 'COVEL_SESSION_ID', default: null, description: 'Continue this session instead of starting one.' },
      { name: 'NO_COLOR', default: null, description: 'Any non-empty value turns colour off (colour is also off when standard output is not a terminal).' },
      { name: 'COLUMNS', default: null, description: 'The wrapping width when standard output is not a terminal (at most 100 columns are used).' },
      {
        name: 'INIT_CWD',
        default: null,
        description:
          'Set by npm to the folder `npm run play` was typed in: `/import <file>` reads a relative file name from there (else from the current folder).',
      },
    ],
  },
  {
    title: 'Docker Compose',
    readBy: '`docker-compose.yml` and `deploy/postgres/10-covel-roles.sh`',
    variables: [
      {
        name: 'COVEL_PUBLISH_ADDRESS',
        default: '`127.0.0.1`',
        description: "The host address the API's port 3000 is published on (`0.0.0.0` opens it; put TLS in front).",
      },
      {
        name: 'COVEL_DB_OWNER_PASSWORD',
        default: '`covel_owner_dev`',
        description: 'Password of the owner role `covel_owner`, set when the database volume is first initialised.',
      },
      {
        name: 'COVEL_DB_APP_PASSWORD',
        default: '`covel_app_dev`',
        description: 'Password of the app role `covel_app`, set when the database volume is first initialised.',
      },
      { name: 'POSTGRES_PASSWORD', default: '`postgres_dev`', description: "The `postgres` image's superuser password." },
    ],
  },
  {
    title: 'Benchmarks',
    readBy: '`npm run bench` (`bench/run.ts`) and `npm run bench:load` (`bench/load/`)',
    variables: [
      {
        name: 'BENCH_ONLY',
        default: 'all',
        description: 'A comma list of the benches `npm run bench` runs: `context`, `context-plugins`, `emberback`, `compaction`, `budget`.',
      },
      { name: 'BENCH_ITERATIONS', default: '60', description: 'Measured iterations per size of `context` and `context-plugins`.' },
      { name: 'BENCH_EMBERBACK_TURNS', default: '50', description: 'Turns of the `emberback` bench.' },
      { name: 'BENCH_COMPACTION_TURNS', default: '300', description: 'Turns of the `compaction` bench.' },
      { name: 'BENCH_BUDGET_TURNS', default: '30', description: 'Turns of the `budget` bench.' },
      {
        name: 'BENCH_RESULTS_DIR',
        default: '`bench/results`',
        description: 'Where `npm run bench` writes its JSON results (the default files are the figures docs/benchmarks.md quotes, committed).',
      },
      {
        name: 'COVEL_BENCH_PG_URL',
        default: '`postgres://postgres@127.0.0.1:5432/test`',
        description: 'An admin database: each load run creates and drops its own database.',
      },
      { name: 'COVEL_BENCH_REDIS_URL', default: '`redis://127.0.0.1:6379`', description: 'Redis for the load runs (each its own queue prefix).' },
      {
        name: 'COVEL_BENCH_NODE_ARGS',
        default: null,
        description: 'Node flags for the API and workers of a load run, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.',
      },
    ],
  },
  {
    title: 'Running TypeScript',
    readBy: '`tools/register.js` (every `npm run` script that starts Node on a `.ts` file)',
    variables: [
      { name: 'SWC_NODE_PROJECT', default: '`tsconfig.json` of the repository', description: 'The tsconfig `@swc-node/register` compiles with.' },
      {
        name: 'SWC_NODE_CACHE_DIR',
        default: '`node_modules/.cache/covel-register`',
        description:
          'Where compiled files are kept, shared by every process (made on demand; the image warms `/app/.swc-cache`): `tools/register.js`’s cache and, for a file it compiles, `@swc-node/register`’s own (default `$TMPDIR/swc-node-<uid>`).',
      },
      { name: 'SWC_NODE_CACHE', default: 'on', description: '`0`, `false`, `off` or `no`: neither cache, every process compiles every file.' },
      {
        name: 'SWCRC',
        default: null,
        description:
          'Set: `@swc-node/register` compiles with `.swcrc` (or `SWC_CONFIG_FILE`) instead of the tsconfig; `tools/register.js`’s cache is not used (`@swc-node/register`’s own still is).',
      },
      {
        name: 'SWC_NODE_SOURCE_MAP_MODE',
        default: '`auto`',
        description: '`inline`, `store`, `both` or `none`: where `@swc-node/register` keeps source maps (`SWC_NODE_INLINE_SOURCE_MAP` set means `inline`).',
      },
      { name: 'SWC_NODE_INLINE_SOURCE_MAP', default: null, description: 'Set: `SWC_NODE_SOURCE_MAP_MODE=inline`.' },
      { name: 'SWC_NODE_IGNORE_DYNAMIC', default: null, description: 'Set: SWC leaves `import()` as it is.' },
    ],
  },
  {
    title: 'Plugins outside the repository',
    readBy: '`libs/engine/plugin-host/package-fallback.ts` (start-up, when a `COVEL_PLUGINS` folder lies outside the repository)',
    variables: [
      {
        name: 'NODE_PATH',
        default: null,
        description:
          "Node's own fallback folders for packages; the engine appends its `node_modules` (and re-reads it) so a plugin outside the repository resolves packages from its own folder first, then the engine's.",
      },
    ],
  },
  {
    title: 'Tests',
    readBy: 'the Jest suites (`npm test`, `npm run test:integration`)',
    variables: [
      {
        name: 'COVEL_PGLITE_TEMPLATE',
        default: null,
        description:
          'A PGlite data directory dump new PGlite databases start from (read by `libs/events/database.ts`); the unit suite sets it to a migrated template made once per run.',
      },
      {
        name: 'COVEL_PGLITE_EMPTY_TEMPLATE',
        default: null,
        description: 'The unit suite sets it to a dump of a PGlite database with no migration applied: the migration tests start from it instead of an initdb.',
      },
      {
        name: 'COVEL_TEST_CPU',
        default: null,
        description:
          'A file: each Jest test file appends a JSON line with the CPU seconds of its run (its Jest process and its child processes) and its wall time; `node tools/test-cpu.js <file>` sums them up.',
      },
      { name: 'COVEL_TEST_PG_URL', default: '`postgres://postgres@127.0.0.1:5432/test`', description: 'PostgreSQL of the integration suite.' },
      { name: 'COVEL_TEST_REDIS_URL', default: '`redis://127.0.0.1:6379`', description: 'Redis of the integration suite.' },
      { name: 'CHROMIUM_PATH', default: '`chromium` on `PATH`', description: 'The browser the inspector test drives.' },
      { name: 'CI', default: null, description: '`true` or `1`: the browser test fails instead of skipping when Chromium is missing.' },
      { name: 'OUTAGES_DUMP', default: null, description: "Set: `outages.test.ts` prints the API's and worker's output." },
    ],
  },
];
