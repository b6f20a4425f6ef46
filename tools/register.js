// Runs TypeScript sources directly (SWC, with decorator metadata for NestJS DI), without loading
// the TypeScript compiler (tools/register-options.js): every child process a CLI or test starts
// saves about 0.45 s of CPU. Compiled files are kept in a transform cache (tools/register-cache.js):
// SWC and @swc-node/register load only when a file is not there.
const { dirname, join } = require('path');
const Module = require('module');
const { compilerOptions, typescriptStub } = require('./register-options');
const { cacheDirectory, cacheSalt, transformCache } = require('./register-cache');
const { installLazyZodLocales } = require('./lazy-zod-locales');
const { installRxjsBundle } = require('./rxjs-bundle');

// zod's ~60 locale modules load when read, not with zod (tools/lazy-zod-locales.js); rxjs is its
// one-file bundle, not ~220 modules (tools/rxjs-bundle.js)
installLazyZodLocales(join(__dirname, '..'));
installRxjsBundle(join(__dirname, '..'));

process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || join(__dirname, '..', 'tsconfig.json');
const registerDir = dirname(require.resolve('@swc-node/register'));
// as register() compiles: tsconfig.json's options, CommonJS output
const options = { ...compilerOptions(process.env.SWC_NODE_PROJECT), module: typescriptStub.ModuleKind.CommonJS };

/** A module of @swc-node/register, loaded with the stand-in `typescript`; anything required later gets the real compiler. */
function requireSwcNode(file) {
  const typescriptPath = require.resolve('typescript', { paths: [registerDir] });
  const stub = new Module(typescriptPath);
  stub.filename = typescriptPath;
  stub.loaded = true;
  stub.exports = typescriptStub;
  require.cache[typescriptPath] = stub;
  try {
    return require(join(registerDir, 'lib', file));
  } finally {
    if (require.cache[typescriptPath] === stub) delete require.cache[typescriptPath];
  }
}

/** @swc-node/register's getSourceMapMode (lib/read-default-tsconfig.js), which loading that module would cost SWC's start. */
function sourceMapMode() {
  if (typeof process.env.SWC_NODE_INLINE_SOURCE_MAP === 'string') process.env.SWC_NODE_SOURCE_MAP_MODE = 'inline';
  const modes = { both: [true, true], inline: [true, false], store: [false, true], none: [false, false] };
  const [inline, store] = modes[process.env.SWC_NODE_SOURCE_MAP_MODE?.trim().toLowerCase()] ?? [true, !process.sourceMapsEnabled];
  return { inline, store };
}

const cacheOff = ['0', 'false', 'off', 'no'].includes(process.env.SWC_NODE_CACHE?.trim().toLowerCase());
if (process.env.SWCRC || cacheOff) {
  // an .swcrc or no cache: @swc-node/register as it comes (its register() with options given skips reading tsconfig.json through the compiler)
  requireSwcNode('register.js').register(compilerOptions(process.env.SWC_NODE_PROJECT));
} else {
  const mode = sourceMapMode();
  // the raw mode too: @swc-node/register compiles with other settings for 'inline' than for the
  // default whose inline/store pair is the same
  const cache = transformCache(cacheDirectory(join(__dirname, '..')), cacheSalt(options, { ...mode, raw: process.env.SWC_NODE_SOURCE_MAP_MODE ?? 'auto' }));
  // register() installs it in this mode; compile() keeps each file's map there
  const sourcemaps = mode.store ? require(require.resolve('@swc-node/sourcemap-support', { paths: [registerDir] })) : undefined;
  if (sourcemaps) sourcemaps.installSourceMapSupport();
  let swcNode;
  const extensions = ['.js', '.ts', '.jsx', '.tsx', '.mjs', '.mts', '.cjs', '.cts', '.es6', '.es'];
  require(require.resolve('pirates', { paths: [registerDir] })).addHook(
    (source, filename) => {
      const hit = cache.get(filename, source);
      if (hit) {
        if (sourcemaps && hit.map !== undefined) sourcemaps.SourcemapMap.set(filename, hit.map);
        return hit.code;
      }
      swcNode ??= requireSwcNode('register.js');
      sourcemaps?.SourcemapMap.delete(filename);
      // compile() deletes this option from what it is given
      const code = swcNode.compile(source, filename, { ...options });
      cache.set(filename, source, code, sourcemaps?.SourcemapMap.get(filename));
      return code;
    },
    { exts: extensions },
  );
}
