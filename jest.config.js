/** Two projects: `unit` runs with no servers (PGlite, in-process queue, loopback emulator);
 *  `integration` needs the real PostgreSQL and Redis (see .ci/run). */
const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
      },
      module: { type: 'commonjs' },
      // the map apart (Jest keeps it beside the cached code and reads it for a stack trace), not inline
      // (@swc/jest's default): inline, each module's code is about three times as long, and every test
      // file reads and compiles it anew for each of the ~1,900 modules an engine test loads
      sourceMaps: true,
    },
  ],
};
// ESM-only packages (plain Node 20 can require() them; Jest's CommonJS runtime cannot): SWC turns them into CommonJS too
const ESM_PACKAGES = ['string-width', 'wrap-ansi', 'get-east-asian-width'];
const esmPath = `/node_modules/(?:${ESM_PACKAGES.join('|')})/`; // their own nested node_modules included
transform[`${esmPath}.+\\.js$`] = ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' }, sourceMaps: true }];
const common = {
  transform,
  transformIgnorePatterns: [`^(?!.*${esmPath}).*/node_modules/`],
  // COVEL_TEST_CPU=<file>: each test file's CPU seconds (its Jest worker's and its child processes') appended there
  // (test/support/cpu-environment.js; `node tools/test-cpu.js <file>` sums them up)
  // otherwise Jest's node environment with a worker-wide cache of PGlite's assets (test/support/test-environment.js)
  testEnvironment: process.env.COVEL_TEST_CPU ? '<rootDir>/test/support/cpu-environment.js' : '<rootDir>/test/support/test-environment.js',
  moduleFileExtensions: ['ts', 'js', 'json'],
};
module.exports = {
  // a limit for hung tests, not a speed check: starting an embedded engine (PGlite, plugins, emulator) takes
  // seconds on 2 busy cores, past Jest's 5 s default for hooks; tests that need longer still say so. A global
  // option: Jest ignores it inside a project.
  testTimeout: 30_000,
  // a worker that holds more than this after a test file is replaced by a new one: suites that start
  // embedded engines leave heap behind (3 GiB per worker by the end of a unit run), and the garbage
  // collector's work on it slowed the last third of the run
  workerIdleMemoryLimit: '1536MB',
  // the slowest suites first, from committed timings when Jest has none (CI): the two workers end together
  testSequencer: '<rootDir>/test/support/sequencer.js',
  projects: [
    {
      ...common,
      displayName: 'unit',
      // every PGlite database starts from one migrated template (test/support/pglite-template.ts)
      globalSetup: '<rootDir>/test/support/pglite-template.ts',
      testMatch: ['<rootDir>/libs/**/*.test.ts', '<rootDir>/apps/**/*.test.ts', '<rootDir>/plugins/**/*.test.ts', '<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      // its PGlite databases too (the turn harness's, an embedded engine's first start): the same template
      globalSetup: '<rootDir>/test/support/pglite-template.ts',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
    },
  ],
};
