import { createHash } from 'node:crypto';
import type { PGliteOptions } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { openDatabase } from '..';

/**
 * A Jest worker's PGlite assets (test/support/test-environment.js): each test file's PGlite databases
 * start from the worker's compiled wasm and file system bundle instead of reading and compiling them again.
 */
describe("PGlite databases from the Jest worker's assets", () => {
  const key = Symbol.for('covel.pgliteAssets');
  type Assets = { wasmModule(): Promise<PGliteOptions['pgliteWasmModule']>; fsBundle(): Buffer; bytes(file: string): Buffer };
  // this realm's (the project's types have no WebAssembly)
  const { WebAssembly } = globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => unknown } };
  const holder = globalThis as unknown as Record<symbol, Assets | undefined>;
  const assets = holder[key];

  it('the test environment hands out one compiled module (of this realm) and the same bundle bytes each time', async () => {
    if (!assets) throw new Error('the unit project runs in test/support/test-environment.js');
    const first = await assets.wasmModule();
    expect(first).toBeInstanceOf(WebAssembly.Module); // PGlite checks this in the test's realm
    expect(await assets.wasmModule()).toBe(first);
    expect(assets.fsBundle()).toBe(assets.fsBundle());
  });

  it('an in-memory database starts from them and works', async () => {
    if (!assets) throw new Error('the unit project runs in test/support/test-environment.js');
    const wasmModule = jest.fn(() => assets.wasmModule());
    const fsBundle = jest.fn(() => assets.fsBundle());
    holder[key] = { ...assets, wasmModule, fsBundle };
    // the databases' install files are views of the worker's bundle bytes: PostgreSQL must never write to them
    const bundleHash = () => createHash('sha256').update(assets.fsBundle()).digest('hex');
    const before = bundleHash();
    try {
      const open = await openDatabase({ kind: 'pglite' });
      try {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(open.db);
        expect(rows[0]?.n).toBeGreaterThan(0); // from the migrated template
        await sql`create table scratch (id int primary key, note text)`.execute(open.db);
        await sql`insert into scratch select g, repeat('é🙂', 50) from generate_series(1, 2000) g`.execute(open.db);
        await sql`select to_char(now(), 'TZ'), 'Ab' < 'ab' collate "C", to_tsvector('english', 'The cats')`.execute(open.db);
        await sql`checkpoint`.execute(open.db);
      } finally {
        await open.close();
      }
    } finally {
      holder[key] = assets;
    }
    expect(wasmModule).toHaveBeenCalledTimes(1);
    expect(fsBundle).toHaveBeenCalledTimes(1);
    expect(bundleHash()).toBe(before);
  });
});
