const { readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

/**
 * What a Jest worker keeps for PGlite across the test files it runs (libs/events/database.ts reads it
 * from the test's global, on this symbol). Each test file has its own module registry, so PGlite's own
 * caches start empty in each: every file read its 9 MB wasm and compiled it again (V8 reuses compiled
 * wasm code only while a module of the same bytes is alive), and each database read its 6 MB file
 * system bundle and the template dump. Kept per worker: about 0.3 CPU-s less for each test file that
 * opens a database (6 such files, means of 3 runs: 13.3 CPU-s before, 11.0 with this and the template's
 * smaller shared memory, of which that saved about 0.5).
 */
const PGLITE_ASSETS = Symbol.for('covel.pgliteAssets');
const files = new Map();
/** A file's bytes, read once per worker: the same Buffer every time, never written to. */
const bytes = (file) => {
  if (!files.has(file)) files.set(file, readFileSync(file));
  return files.get(file);
};
const dist = () => dirname(require.resolve('@electric-sql/pglite'));
/** Held for the worker's life: V8 then shares its compiled code with each test file's module of the same bytes. */
let keptWasm;

/** Jest's node environment with the worker's PGlite assets on the test's global. */
class CovelEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    const realm = this.global;
    let wasmModule;
    realm[PGLITE_ASSETS] = {
      // compiled in the test's realm: PGlite checks `instanceof WebAssembly.Module` there
      wasmModule: () => {
        const wasm = bytes(join(dist(), 'pglite.wasm'));
        keptWasm ??= new WebAssembly.Module(wasm);
        return (wasmModule ??= realm.WebAssembly.compile(wasm));
      },
      fsBundle: () => bytes(join(dist(), 'pglite.data')),
      bytes,
    };
  }
}

module.exports = CovelEnvironment;
