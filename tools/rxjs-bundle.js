// rxjs as its own one-file build (dist/bundles/rxjs.umd.js, the same version), not its CommonJS
// build of ~220 modules: every engine process loads rxjs through Nest, and requiring the CommonJS
// build took about 0.13-0.15 s of CPU in a child process, the bundle about 0.014 s.
//
// tools/register.js installs it: it puts in the module cache, under the paths `rxjs` and
// `rxjs/operators` resolve to, modules whose exports are the bundle and its `operators`, read at
// the first require (a process that never requires rxjs loads nothing). Nest and the engine require
// only these two (`rxjs/internal/...` would load the CommonJS build beside the bundle: two
// Observable classes; test/unit/lazy-packages.test.ts checks that an engine loads no other file of rxjs).
const { moduleStub } = require('./module-stub');
const { existsSync, readFileSync } = require('fs');
const { dirname, join } = require('path');

/** The paths of rxjs's CommonJS entries and of its bundle, for the rxjs found from `root`; null when it is not as expected. */
function rxjsPaths(root) {
  try {
    const index = require.resolve('rxjs', { paths: [root] });
    const operators = require.resolve('rxjs/operators', { paths: [root] });
    // dist/cjs/index.js of the package
    const dir = join(dirname(index), '..', '..');
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const bundle = join(dir, 'dist', 'bundles', 'rxjs.umd.js');
    if (json.name !== 'rxjs' || !/^7\./.test(json.version) || index !== join(dir, 'dist', 'cjs', 'index.js') || !existsSync(bundle)) return null;
    return { index, operators, bundle };
  } catch {
    return null;
  }
}

/** A loaded module at `filename` whose exports are `get()`, called at the first require. */
function lazyModule(filename, get) {
  const stub = moduleStub(filename);
  let exports;
  Object.defineProperty(stub, 'exports', {
    get: () => (exports ??= get()),
    set: (value) => {
      exports = value;
    },
    enumerable: true,
    configurable: true,
  });
  return stub;
}

/** Installs the bundle in the place of rxjs's CommonJS entries, unless one is loaded already or rxjs is not as expected. */
function installRxjsBundle(root) {
  const paths = rxjsPaths(root);
  if (!paths || require.cache[paths.index] || require.cache[paths.operators]) return false;
  const index = lazyModule(paths.index, () => index.require(paths.bundle));
  const operators = lazyModule(paths.operators, () => index.exports.operators);
  require.cache[paths.index] = index;
  require.cache[paths.operators] = operators;
  return true;
}

module.exports = { installRxjsBundle, rxjsPaths };
