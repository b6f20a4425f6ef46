// A loaded module at `filename` whose exports its maker sets: what tools/rxjs-bundle.js and
// tools/lazy-zod-locales.js put in the module cache in the place of a package's own file.
const Module = require('module');
const { dirname } = require('path');

/** A module marked loaded, at `filename`, resolving its own requires from there as that file would. */
function moduleStub(filename) {
  const stub = new Module(filename);
  stub.filename = filename;
  stub.paths = Module._nodeModulePaths(dirname(filename));
  stub.loaded = true;
  return stub;
}

module.exports = { moduleStub };
