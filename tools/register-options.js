// What tools/register.js hands @swc-node/register instead of letting it load the TypeScript
// compiler: @swc-node/register requires `typescript` (about 0.45 s of CPU, most of a child
// process's start) only for its enums and to parse tsconfig.json. The enums it reads are below
// (test/unit/register-options.test.ts checks them against `typescript`), and tsconfig.json is
// plain JSON whose few options that change SWC's output are converted here.
const { readFileSync } = require('fs');

const typescriptEnums = {
  Extension: { Js: '.js', Ts: '.ts', Jsx: '.jsx', Tsx: '.tsx', Mjs: '.mjs', Mts: '.mts', Cjs: '.cjs', Cts: '.cts' },
  ScriptTarget: {
    ES3: 0,
    ES5: 1,
    ES2015: 2,
    ES2016: 3,
    ES2017: 4,
    ES2018: 5,
    ES2019: 6,
    ES2020: 7,
    ES2021: 8,
    ES2022: 9,
    ES2023: 10,
    ES2024: 11,
    ESNext: 99,
    Latest: 99,
    JSON: 100,
  },
  ModuleKind: { None: 0, CommonJS: 1, AMD: 2, UMD: 3, System: 4, ES2015: 5, ES2020: 6, ES2022: 7, ESNext: 99, Node16: 100, NodeNext: 199 },
  ModuleResolutionKind: { NodeJs: 2 },
  JsxEmit: { None: 0, Preserve: 1, React: 2, ReactNative: 3, ReactJSX: 4, ReactJSXDev: 5 },
};

/** The stand-in `typescript` module: the enums, and a clear error for anything else it is asked. */
const typescriptStub = {
  ...typescriptEnums,
  transpileModule() {
    throw new Error('tools/register.js: @swc-node/register asked for the TypeScript compiler (fallbackToTs), which it does not load');
  },
};

// the compiler options that tsCompilerOptionsToSwcConfig reads (others only name the cache entry)
const BOOLEAN_OPTIONS = [
  'sourceMap',
  'inlineSourceMap',
  'experimentalDecorators',
  'emitDecoratorMetadata',
  'useDefineForClassFields',
  'esModuleInterop',
  'importHelpers',
];

/** tsconfig.json's compiler options as `ts.parseJsonConfigFileContent` gives those that SWC's output depends on. */
function compilerOptions(tsconfigPath) {
  const { compilerOptions: json = {}, extends: base } = JSON.parse(readFileSync(tsconfigPath, 'utf8'));
  // an option this conversion does not know would silently change nothing: refuse it instead
  const unknown = ['jsx', 'jsxFactory', 'jsxFragmentFactory', 'jsxImportSource', 'baseUrl', 'paths', 'sourceRoot'].filter((key) => key in json);
  if (base || unknown.length)
    throw new Error(`tools/register.js: ${tsconfigPath} uses ${base ? 'extends' : unknown.join(', ')}, which tools/register-options.js does not convert`);
  const options = {};
  for (const key of BOOLEAN_OPTIONS) if (typeof json[key] === 'boolean') options[key] = json[key];
  options.target = enumValue(typescriptEnums.ScriptTarget, json.target ?? 'ES2018', 'target');
  options.module = enumValue(typescriptEnums.ModuleKind, json.module ?? 'commonjs', 'module');
  return options;
}

function enumValue(values, name, option) {
  const key = Object.keys(values).find((k) => k.toLowerCase() === String(name).toLowerCase());
  if (key === undefined) throw new Error(`tools/register.js: compilerOptions.${option} "${name}" is not known to tools/register-options.js`);
  return values[key];
}

module.exports = { typescriptEnums, typescriptStub, compilerOptions };
