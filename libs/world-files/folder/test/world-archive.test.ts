import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { strFromU8, strToU8, unzipSync, Zip, ZipDeflate, zipSync, type Zippable } from 'fflate';
import { parseWorldFile, WorldDocument } from '../../../plugins-sdk';
import { exportWorldArchive, importWorldArchive, WORLD_ARCHIVE_LIMITS, worldMarkdown } from '..';
import { expectSameDocument, worldDocument } from './world-arbitrary';

const WORLDS = join(__dirname, '..', '..', '..', '..', 'worlds');
const emberback = parseWorldFile(readFileSync(join(WORLDS, 'emberback', 'WORLD.md'), 'utf8'), 'WORLD.md');
const replyBook: unknown = JSON.parse(readFileSync(join(WORLDS, 'emberback', 'emulator-replies.json'), 'utf8'));

const SMALL = '---\nid: harbor\nname: Harbor\n---\nA port.\n';
const zip = (files: Record<string, string | Uint8Array>): Uint8Array =>
  zipSync(Object.fromEntries(Object.entries(files).map(([name, data]) => [name, typeof data === 'string' ? strToU8(data) : data])) as Zippable);

/** Where a zip's entries start: each central directory header, and the local header it points to. */
function headers(bytes: Uint8Array): { central: number; local: number; name: string }[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length - 22;
  const out: { central: number; local: number; name: string }[] = [];
  let at = view.getUint32(end + 16, true);
  for (let i = 0; i < view.getUint16(end + 10, true); i++) {
    const nameLength = view.getUint16(at + 28, true);
    out.push({ central: at, local: view.getUint32(at + 42, true), name: strFromU8(bytes.subarray(at + 46, at + 46 + nameLength)) });
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return out;
}

/** The zip with one entry's header fields changed: its declared uncompressed size, compression method or name (same length). */
function patched(bytes: Uint8Array, name: string, change: { size?: number; method?: number; rename?: string; localOnly?: boolean }): Uint8Array {
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  const entry = headers(out).find((h) => h.name === name)!;
  if (change.size !== undefined) {
    view.setUint32(entry.local + 22, change.size, true);
    view.setUint32(entry.central + 24, change.size, true);
  }
  if (change.method !== undefined) {
    view.setUint16(entry.local + 8, change.method, true);
    view.setUint16(entry.central + 10, change.method, true);
  }
  if (change.rename !== undefined) {
    out.set(strToU8(change.rename), entry.local + 30);
    if (!change.localOnly) out.set(strToU8(change.rename), entry.central + 46);
  }
  return out;
}

const refusal = (bytes: Uint8Array, limits = WORLD_ARCHIVE_LIMITS) => {
  const result = importWorldArchive(bytes, limits);
  if (result.ok) throw new Error('expected a refusal');
  return result;
};

describe('exportWorldArchive / importWorldArchive: a world folder as a zip', () => {
  it('imports what it exports as the same document, for generated documents (property)', () => {
    fc.assert(
      fc.property(worldDocument, (document) => {
        const result = importWorldArchive(exportWorldArchive({ document, id: 'generated' }));
        expect(result.ok && result.id).toBe('generated');
        if (result.ok) expectSameDocument(result.document, document);
      }),
      { numRuns: 60 },
    );
  });

  it('holds <id>/WORLD.md (its id in the front matter) and <id>/emulator-replies.json; both come back', () => {
    const bytes = exportWorldArchive({ document: emberback.document, id: 'emberback', replyBook });
    const files = unzipSync(bytes);
    expect(Object.keys(files)).toEqual(['emberback/WORLD.md', 'emberback/emulator-replies.json']);
    expect(strFromU8(files['emberback/WORLD.md'])).toBe(worldMarkdown(emberback.document, { id: 'emberback' }));
    expect(JSON.parse(strFromU8(files['emberback/emulator-replies.json']))).toEqual(replyBook);
    const result = importWorldArchive(bytes);
    expect(result.ok && result.id).toBe('emberback');
    if (!result.ok) return;
    expectSameDocument(result.document, emberback.document);
    expect(result.replyBook).toEqual(replyBook);
    expect('replyBook' in (importWorldArchive(exportWorldArchive({ document: emberback.document, id: 'emberback' })) as object)).toBe(false);
  });

  it('is deterministic: the same document gives the same bytes, in any time zone, dated 1980-01-01 12:00', () => {
    const zone = process.env.TZ;
    try {
      const bytes = ['UTC', 'Pacific/Kiritimati', 'America/St_Johns', 'Asia/Kolkata'].map((tz) => {
        process.env.TZ = tz;
        return Buffer.from(exportWorldArchive({ document: emberback.document, id: 'emberback', replyBook })).toString('base64');
      });
      expect(new Set(bytes).size).toBe(1);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    const bytes = exportWorldArchive({ document: emberback.document, id: 'emberback' });
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const [entry] = headers(bytes);
    expect([view.getUint16(entry.central + 12, true), view.getUint16(entry.central + 14, true)]).toEqual([12 << 11, (1 << 5) | 1]);
  });

  it('takes the id from the front matter, else from a folder named as a world id, else none', () => {
    const noId = '---\nname: Harbor\n---\nA port.\n';
    const idOf = (files: Record<string, string>) => {
      const result = importWorldArchive(zip(files));
      return result.ok ? result.id : result;
    };
    expect(idOf({ 'WORLD.md': SMALL })).toBe('harbor');
    expect(idOf({ 'WORLD.md': noId })).toBeNull();
    expect(idOf({ 'harbor-2/WORLD.md': noId })).toBe('harbor-2');
    expect(idOf({ 'My Harbor (copy)/WORLD.md': noId })).toBeNull();
    expect(idOf({ 'other-name/WORLD.md': SMALL })).toBe('harbor');
  });

  it('reads a folder zipped by other tools: folder entries, other files, data descriptors (streamed zips)', () => {
    expect(
      importWorldArchive(zip({ 'harbor/': new Uint8Array(), 'harbor/WORLD.md': SMALL, 'harbor/art/map.png': new Uint8Array(300), 'README.md': 'x' })).ok,
    ).toBe(true);
    // fflate's streaming writer, like `zip -` or a browser, writes sizes after the data
    const parts: Uint8Array[] = [];
    const streamed = new Zip((error, chunk) => {
      if (error) throw error;
      parts.push(chunk);
    });
    for (const [name, text] of [
      ['harbor/notes.txt', 'notes'],
      ['harbor/WORLD.md', SMALL],
      ['harbor/emulator-replies.json', '{"tools": []}'],
    ]) {
      const file = new ZipDeflate(name, { level: 6 });
      streamed.add(file);
      file.push(strToU8(text), true);
    }
    streamed.end();
    const result = importWorldArchive(Buffer.concat(parts));
    expect(result.ok && [result.id, result.document.lore, result.replyBook]).toEqual(['harbor', 'A port.', { tools: [] }]);
  });

  it('refuses what is not a readable zip (BAD_ARCHIVE)', () => {
    const good = exportWorldArchive({ document: emberback.document, id: 'emberback' });
    for (const bytes of [
      new Uint8Array(),
      strToU8('just text'),
      new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      good.subarray(0, good.length - 10),
      good.subarray(40),
    ]) {
      expect(refusal(bytes)).toMatchObject({ code: 'BAD_ARCHIVE', category: 'invalid', issues: [{ path: '(archive)' }] });
    }
    // damaged deflate data under intact headers
    const damaged = good.slice();
    damaged.fill(0xff, 60, 200);
    expect(refusal(damaged).code).toBe('BAD_ARCHIVE');
  });

  it('refuses unsafe entry names, naming the entry: traversal, absolute paths, drive letters, backslashes, control characters', () => {
    for (const name of [
      '../WORLD.md',
      'w/../../WORLD.md',
      '/etc/WORLD.md',
      'C:/w/WORLD.md',
      'w\\..\\WORLD.md',
      'w//WORLD.md',
      './WORLD.md',
      '~/WORLD.md',
      'w/WORLD.md:alt',
      'w\u0000/x',
      'w\n/x',
    ]) {
      const result = refusal(zip({ [name]: SMALL, 'safe/WORLD.md': SMALL }));
      expect(result).toMatchObject({ code: 'BAD_ARCHIVE', issues: [{ path: name }] });
    }
  });

  it('wants exactly one WORLD.md, at the root or in one top folder', () => {
    expect(refusal(zip({ 'README.md': 'x' })).issues[0].message).toBe('no WORLD.md at the root or in one top folder');
    expect(refusal(zip({ 'repo/worlds/harbor/WORLD.md': SMALL })).issues[0].message).toMatch(/found deeper: repo\/worlds\/harbor\/WORLD\.md/);
    expect(refusal(zip({ 'WORLD.md': SMALL, 'b/WORLD.md': SMALL })).issues[0].message).toBe('more than one WORLD.md: WORLD.md, b/WORLD.md');
    expect(refusal(zip({ 'a/WORLD.md': SMALL, 'b/WORLD.md': SMALL })).code).toBe('BAD_ARCHIVE');
    // two entries of the same name: which one a tool reads is up to the tool
    const twice = patched(zip({ 'a/WORLD.md': SMALL, 'b/WORLD.md': SMALL }), 'b/WORLD.md', { rename: 'a/WORLD.md' });
    expect(refusal(twice)).toMatchObject({ code: 'BAD_ARCHIVE', issues: [{ path: 'a/WORLD.md', message: 'appears more than once' }] });
  });

  it('refuses a zip whose local headers name other entries than its central directory, or an unsupported compression', () => {
    const other = patched(zip({ 'a/WORLD.md': SMALL, 'a/notes.txt': 'n' }), 'a/notes.txt', { rename: 'a/WORLD.md', localOnly: true });
    expect(refusal(other).issues[0].message).toBe('not a readable zip: its local file headers do not name the entries of its central directory');
    const bzip2 = patched(zip({ 'a/WORLD.md': SMALL }), 'a/WORLD.md', { method: 12 });
    expect(refusal(bzip2)).toMatchObject({ code: 'BAD_ARCHIVE', issues: [{ path: 'a/WORLD.md', message: expect.stringMatching(/compression method 12/) }] });
  });

  it('caps the entries and the uncompressed bytes from the headers (ARCHIVE_TOO_LARGE), before inflating anything', () => {
    const many = zip(Object.fromEntries([['w/WORLD.md', SMALL], ...Array.from({ length: 4 }, (_, i) => [`w/${i}.txt`, `${i}`])]));
    expect(refusal(many, { maxEntries: 4, maxUncompressedBytes: 1e6 })).toMatchObject({
      code: 'ARCHIVE_TOO_LARGE',
      category: 'too-large',
      issues: [{ path: '(archive)', message: 'more than 4 entries (the limit maxEntries)' }],
    });
    expect(importWorldArchive(many, { maxEntries: 5, maxUncompressedBytes: 1e6 }).ok).toBe(true);
    const big = zip({ 'w/WORLD.md': SMALL, 'w/big.txt': 'x'.repeat(2000) });
    expect(refusal(big, { maxEntries: 10, maxUncompressedBytes: 2000 }).issues[0].message).toMatch(
      /declare \d+ uncompressed bytes, past 2000 \(the limit maxUncompressedBytes\)/,
    );
    // a header claiming 4 GB is refused from the header: nothing is allocated for it
    expect(refusal(patched(zip({ 'w/WORLD.md': SMALL }), 'w/WORLD.md', { size: 0xfffffffe })).code).toBe('ARCHIVE_TOO_LARGE');
  });

  it('stops inflating an entry past the size its header declares (a zip bomb with lying headers), and refuses one short of it', () => {
    // 16 MB of spaces deflate to ~16 KB; the headers claim 200 bytes, which pass every cap
    const bomb = patched(zip({ 'w/WORLD.md': SMALL + ' '.repeat(16 * 1024 * 1024) }), 'w/WORLD.md', { size: 200 });
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect(refusal(bomb)).toMatchObject({ code: 'BAD_ARCHIVE', issues: [{ path: 'w/WORLD.md', message: 'inflates past the 200 bytes its header declares' }] });
    const short = patched(zip({ 'w/WORLD.md': SMALL }), 'w/WORLD.md', { size: SMALL.length + 10 });
    expect(refusal(short).issues[0].message).toBe(`inflates to ${SMALL.length} bytes, not the ${SMALL.length + 10} its header declares`);
  });

  it('gives schema errors with their field paths, and names a bad file (INVALID_WORLD)', () => {
    const invalid = (text: string | Uint8Array, replies?: string) =>
      refusal(zip({ 'w/WORLD.md': text, ...(replies === undefined ? {} : { 'w/emulator-replies.json': replies }) }));
    expect(invalid('---\nname: W\nlorebook:\n  - id: a\ncharacters:\n  - { id: a, name: A, nickname: x }\n---\n')).toEqual({
      ok: false,
      code: 'INVALID_WORLD',
      category: 'invalid',
      issues: [
        { path: 'characters.0.nickname', message: 'unknown key' },
        { path: 'lorebook.0.content', message: expect.any(String) },
      ],
    });
    expect(invalid('---\nname: [unclosed\n---\n').issues[0].path).toBe('(yaml)');
    expect(invalid('---\nid: Not An Id\nname: W\n---\n').issues).toEqual([{ path: 'id', message: expect.any(String) }]);
    expect(invalid('---\nname: W\n---\n<!-- narrator-only -->\nnever closed').issues[0].path).toBe('lore');
    expect(invalid(new Uint8Array([...strToU8('---\nname: '), 0xff, 0xfe, ...strToU8('\n---\n')])).issues).toEqual([
      { path: 'w/WORLD.md', message: 'is not UTF-8 text' },
    ]);
    expect(invalid(`---\nname: W\nextensions:\n  deep: ${'['.repeat(5000)}${']'.repeat(5000)}\n---\n`).issues[0].path).toBe('(yaml)');
    expect(invalid(SMALL, '{ nope').issues).toEqual([{ path: 'w/emulator-replies.json', message: expect.stringMatching(/^is not JSON/) }]);
  });

  it('refuses a document past WORLD_LIMITS.documentBytes as JSON (ARCHIVE_TOO_LARGE)', () => {
    const text = worldMarkdown(WorldDocument.parse({ name: 'W', extensions: { blob: 'x'.repeat(4 * 1024 * 1024) } }));
    expect(refusal(zip({ 'WORLD.md': text }))).toMatchObject({
      code: 'ARCHIVE_TOO_LARGE',
      issues: [{ path: '(document)', message: expect.stringMatching(/past 4194304 \(the limit documentBytes\)/) }],
    });
  });

  it('refuses an id that is not a world id (a caller bug)', () => {
    expect(() => exportWorldArchive({ document: emberback.document, id: '../evil' })).toThrow(expect.objectContaining({ code: 'INVALID_WORLD_ID' }));
  });
});
