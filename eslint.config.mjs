// Lint for the whole repository (run by `npm test` through `npm run lint`).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { readFileSync } from 'node:fs';

// What the runtime image runs, and what it must not load (see the boundary block below).
const PRODUCTION = [
  'apps/**/*.{ts,js,mjs,cjs}',
  'libs/**/*.{ts,js,mjs,cjs}',
  'plugins/**/*.{ts,js,mjs,cjs}',
  'tools/**/*.{ts,js,mjs,cjs}',
  'migrations/**/*.{ts,js}',
];
// the docs generators (npm run docs:config, bench --write-docs) and the import-loop check (npm run cycles) are development
// tools, not in the image (.dockerignore)
const NOT_PRODUCTION = [
  '**/test/**',
  '**/*.test.ts',
  'libs/emulator/**',
  'libs/plugin-testing/**',
  'tools/docs-block.ts',
  'tools/config-docs/**',
  'tools/import-graph/**',
];
// import paths, matched by path segment: libs/emulator; test/support, any test/ folder, the
// benchmarks, the plugin SDK's test harness
const EMULATOR = '(^|/)emulator(/|$)';
const DEV_ONLY = '(^|/)(test|bench)(/|$)|\\.test$|(^|/)plugin-testing(/|$)';
const EMULATOR_MESSAGE =
  'Production code does not load the offline provider emulator (a dev and test tool): start it through libs/engine/startup/offline-emulator.ts, or import its types with `import type`.';
// the devDependencies are not installed in the runtime image (`npm ci --omit=dev`); their types may be imported
const DEV_PACKAGES = Object.keys(JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).devDependencies);
const DEV_PACKAGE = `^(${DEV_PACKAGES.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(/|$)`;
const DEV_PACKAGE_MESSAGE =
  'A devDependency is not installed in the runtime image (npm ci --omit=dev): make it a dependency, or import its types with `import type`.';
const DEV_ONLY_MESSAGE = 'Production code does not import test code (test/support, test folders, *.test), the benchmarks or the plugin SDK test harness.';
/** `import('…')` and `require('…')` of a path the regex matches (an esquery regex cannot hold a slash: it is written \\x2F). */
const dynamicLoads = (regex) => {
  const esquery = regex.replaceAll('/', '\\x2F');
  const message = { [EMULATOR]: EMULATOR_MESSAGE, [DEV_ONLY]: DEV_ONLY_MESSAGE, [DEV_PACKAGE]: DEV_PACKAGE_MESSAGE }[regex];
  return [
    { selector: `ImportExpression[source.value=/${esquery}/]`, message },
    { selector: `CallExpression[callee.name='require'][arguments.0.value=/${esquery}/]`, message },
  ];
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'bench/results/**', '.covel/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node, ...globals.jest },
      // Nest reads constructor types through decorator metadata: files with decorators keep value imports
      parserOptions: { emitDecoratorMetadata: true, experimentalDecorators: true },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      eqeqeq: ['error', 'smart'],
      'no-console': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Boundary: production code (what the image runs) never loads the offline provider emulator, test
  // code or the benchmarks. libs/engine/startup/offline-emulator.ts is the one door to the emulator, by a
  // dynamic import when no provider key is set; type-only imports of the emulator are erased at
  // compile time and allowed (the engine's `emulator` field is typed with it).
  {
    files: PRODUCTION,
    ignores: NOT_PRODUCTION,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: EMULATOR, caseSensitive: true, allowTypeImports: true, message: EMULATOR_MESSAGE },
            { regex: DEV_ONLY, caseSensitive: true, message: DEV_ONLY_MESSAGE },
            { regex: DEV_PACKAGE, caseSensitive: true, allowTypeImports: true, message: DEV_PACKAGE_MESSAGE },
          ],
        },
      ],
    },
  },
  {
    files: PRODUCTION,
    ignores: [...NOT_PRODUCTION, 'libs/engine/startup/offline-emulator.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...[EMULATOR, DEV_ONLY, DEV_PACKAGE].flatMap((regex) => dynamicLoads(regex))],
    },
  },
  // the web inspector's modules run in the browser
  { files: ['apps/api/inspector/assets/**/*.js'], languageOptions: { globals: globals.browser } },
  prettier,
);
