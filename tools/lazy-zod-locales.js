// zod's locales, each loaded when it is first read rather than all with zod: zod's index requires
// every one of its ~60 locale modules (for `z.locales`), which the engine never reads (zod's
// English messages come from its own import of locales/en.cjs). Requiring zod took about 0.11 s of
// CPU in a child process, 0.07 s with this (62 modules fewer).
//
// tools/register.js installs it: it puts in the module cache, under the path of zod's
// v4/locales/index.cjs, a module with the same names, each a getter that requires that locale's
// module (as the real index's getters give it), frozen as zod freezes its modules. When the index
// is not in the form this reads (another zod), nothing is installed and zod loads as it comes.
const { moduleStub } = require('./module-stub');
const { dirname, join } = require('path');
const { readFileSync } = require('fs');

/** The lazy index for zod as found from `root`, or null when zod or its index is not as expected. */
function lazyLocalesModule(root) {
  let file;
  try {
    file = join(dirname(require.resolve('zod', { paths: [root] })), 'v4', 'locales', 'index.cjs');
  } catch {
    return null;
  }
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  // `var ar_js_1 = require("./ar.cjs");` then `Object.defineProperty(exports, "ar", { enumerable: true, get: function () { return __importDefault(ar_js_1).default; } });`
  const modules = new Map([...text.matchAll(/^var (\w+) = require\("\.\/([\w-]+\.cjs)"\);$/gm)].map((m) => [m[1], m[2]]));
  const names = [
    ...text.matchAll(
      /^Object\.defineProperty\(exports, "(\w+)", \{ enumerable: true, get: function \(\) \{ return __importDefault\((\w+)\)\.default; \} \}\);$/gm,
    ),
  ];
  // every require and every export read: anything else in the index means another layout
  const requires = text.match(/require\(/g) ?? [];
  const defines = text.match(/Object\.defineProperty\(exports, "/g) ?? [];
  if (names.length === 0 || requires.length !== modules.size || defines.length !== names.length + 1 || names.some(([, , v]) => !modules.has(v))) return null;
  const stub = moduleStub(file);
  const locales = {};
  Object.defineProperty(locales, '__esModule', { value: true });
  for (const [, name, variable] of names) {
    const path = join(dirname(file), modules.get(variable));
    Object.defineProperty(locales, name, {
      enumerable: true,
      get() {
        const m = stub.require(path);
        return m && m.__esModule ? m.default : m;
      },
    });
  }
  stub.exports = Object.freeze(locales);
  return stub;
}

/** Installs the lazy index for the zod of `root`, unless zod's index is already loaded or not as expected. */
function installLazyZodLocales(root) {
  const stub = lazyLocalesModule(root);
  if (stub && !require.cache[stub.filename]) require.cache[stub.filename] = stub;
  return stub !== null;
}

module.exports = { installLazyZodLocales, lazyLocalesModule };
