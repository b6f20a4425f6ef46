import { request as httpRequest } from 'node:http';
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import extractChunks from 'png-chunks-extract';
import { WORLD_LIMITS } from '../../libs/plugins-sdk';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { countEvents, onePixelPng } from '../support/world-files';

/**
 * Issue 29, acceptance: hostile input to the worlds API — bad PNGs, truncated and forged chunks,
 * bad base64 and JSON, bodies of 50 MB, deep JSON, NUL, lone surrogates, `__proto__`, wrong types,
 * limits, zip bombs and `../` paths, bad `If-Match`, unknown query parameters, ids that are not ids,
 * multipart with two files. Each is a 4xx whose body names the problem, never a 500, and appends nothing.
 */

interface Answer {
  status: number;
  text: string;
  json: { statusCode?: number; code?: string; message?: string; issues?: { path: string; message: string }[] } | null;
  /** Body bytes the client had written when the answer came. */
  written: number;
}

/**
 * One request with exactly these bytes and headers (node:http: fetch cannot send a lying
 * content-length, two If-Match headers, or `..` in a path). `body` as a function streams chunks
 * until it answers null or the server answers (a server that answers early stops the upload).
 */
function send(
  baseUrl: string,
  options: { method: string; path: string; headers?: Record<string, string | string[]>; body?: Uint8Array | string | (() => Uint8Array | null) },
): Promise<Answer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: options.method, path: options.path, headers: options.headers, agent: false },
      (res) => {
        answered = true;
        const at = written;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Answer['json'] = null;
          try {
            json = JSON.parse(text) as Answer['json'];
          } catch {
            json = null;
          }
          req.destroy();
          resolve({ status: res.statusCode ?? 0, text, json, written: at });
        });
      },
    );
    req.on('error', (error) => {
      // the server may close the connection on an upload it refused: only an error before any answer counts
      if (!answered) reject(error);
    });
    const body = options.body;
    if (typeof body === 'function') {
      const pump = () => {
        for (;;) {
          if (answered) return;
          const chunk = body();
          if (chunk === null) return void req.end();
          written += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
      };
      pump();
    } else {
      if (body !== undefined) {
        written = Buffer.byteLength(body);
        req.write(body);
      }
      req.end();
    }
  });
}

const enc = (text: string) => new TextEncoder().encode(text);

/** A 1×1 RGB PNG with `texts` as tEXt chunks before IEND. */
const png = (texts: { keyword: string; value: string }[] = []): Uint8Array => onePixelPng({ texts });
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const cardJson = (data: Record<string, unknown> = {}) => ({ spec: 'chara_card_v2', spec_version: '2.0', data: { name: 'Mira', first_mes: 'Hello.', ...data } });
const cardPng = (card: unknown) => png([{ keyword: 'chara', value: b64(typeof card === 'string' ? card : JSON.stringify(card)) }]);

/** The first chunk after IHDR with its length field set to `length` (CRC untouched). */
function forgedLength(bytes: Uint8Array, length: number): Uint8Array {
  const out = bytes.slice();
  const ihdrEnd = 8 + 12 + 13;
  new DataView(out.buffer).setUint32(ihdrEnd, length);
  return out;
}
/** The card PNG with one byte of its tEXt data flipped (a CRC mismatch). */
function badCrc(): Uint8Array {
  const bytes = cardPng(cardJson());
  const chunks = extractChunks(bytes);
  const at = bytes.length - 12 - (chunks.at(-2)!.data.length + 12) + 8 + 2;
  const out = bytes.slice();
  out[at] ^= 0x01;
  return out;
}

/** `depth` nested arrays as JSON text around `inner`. */
const nested = (depth: number, inner = '0') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

const WORLD_MD = '---\nname: Zipped\n---\nA world in a zip.\n';
/** 2026-01-01 00:00 as a zip's DOS time and date. */
const ZIP_TIME = ((2026 - 1980) << 25) | (1 << 21) | (1 << 16);

/**
 * A zip of `files`, each deflated by node:zlib (native code: the zip bomb's 256 MiB of zeros in a
 * fraction of the CPU fflate's JavaScript deflate spends), laid out as fflate's `zipSync` writes one:
 * each local header with its CRC and sizes, then the central directory and its end record.
 */
function zip(files: Record<string, Uint8Array>): Uint8Array {
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of Object.entries(files)) {
    const filename = Buffer.from(name);
    const deflated = deflateRawSync(data); // level 6: the bomb's 256 MiB in the same 255 KiB as level 9, at a third of the CPU
    /** Version needed, flags, method (8: deflate), time, CRC, sizes, name length: the fields both headers share. */
    const shared = (header: Buffer, at: number) => {
      header.writeUInt16LE(20, at);
      header.writeUInt16LE(8, at + 4);
      header.writeUInt32LE(ZIP_TIME, at + 6);
      header.writeUInt32LE(crc32(data), at + 10);
      header.writeUInt32LE(deflated.length, at + 14);
      header.writeUInt32LE(data.length, at + 18);
      header.writeUInt16LE(filename.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    shared(local, 4);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4); // made by
    shared(entry, 6);
    entry.writeUInt32LE(offset, 42);
    parts.push(local, filename, deflated);
    directory.push(entry, filename);
    offset += local.length + filename.length + deflated.length;
  }
  const central = Buffer.concat(directory);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(directory.length / 2, 8);
  end.writeUInt16LE(directory.length / 2, 10);
  end.writeUInt32LE(central.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, central, end]);
}

/** A multipart/form-data body, written by hand (FormData cannot name two file parts' bytes exactly). */
function multipart(parts: { name: string; filename?: string; type?: string; data: Uint8Array | string }[]): { body: Buffer; type: string } {
  const boundary = '----covel-hostile-boundary';
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`));
    chunks.push(Buffer.from(p.data));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

const MB = 1024 * 1024;

describe('issue 29 acceptance: hostile input to the worlds API', () => {
  let covel: EmbeddedEngine;
  let key = '';
  let worldId = '';
  let sessionId = '';

  const world = {
    name: 'Harbour',
    lore: 'A harbour.',
    characters: [{ id: 'pilot', name: 'Pilot', description: 'Guides ships in.' }],
    plugins: ['narrator'],
  };

  beforeAll(async () => {
    covel = await startEmbedded();
    key = (await covel.engine.tenants.create('world-hostile')).apiKey;
    const created = await send(covel.baseUrl, { method: 'POST', path: '/v1/worlds', headers: { ...auth(), ...json }, body: JSON.stringify(world) });
    worldId = (created.json as unknown as { id: string }).id;
    const session = await send(covel.baseUrl, { method: 'POST', path: '/v1/sessions', headers: { ...auth(), ...json }, body: JSON.stringify({ worldId }) });
    sessionId = (session.json as unknown as { id: string }).id;
    // revision 2: a session on revision 1 could move to it
    const put = await send(covel.baseUrl, {
      method: 'PUT',
      path: `/v1/worlds/${worldId}`,
      headers: { ...auth(), ...json, 'if-match': '"1"' },
      body: JSON.stringify({ ...world, lore: 'A harbour at night.' }),
    });
    expect([created.status, session.status, put.status]).toEqual([201, 201, 200]);
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
  });

  const auth = () => ({ authorization: `Bearer ${key}` });
  const json = { 'content-type': 'application/json' };
  const eventCount = () => countEvents(covel.engine.database.db);

  type Request = { method: string; path: string; headers?: Record<string, string | string[]>; body?: Uint8Array | string | (() => Uint8Array | null) };
  /** What the answer must name: an issue's path, or (for problems of the request itself) a pattern of its message. */
  interface Case {
    name: string;
    request: () => Request;
    status: number;
    code: string;
    path?: string | RegExp;
    message?: RegExp;
    /** A body streamed past the limit: the answer came before the client had written this many bytes (the server did not read it all). */
    maxWritten?: number;
  }

  const createWorld = (body: string | Uint8Array, headers: Record<string, string> = json): Request => ({
    method: 'POST',
    path: '/v1/worlds',
    headers: { ...auth(), ...headers },
    body,
  });
  const put = (body: string, ifMatch: string | string[] = '"2"', id = worldId): Request => ({
    method: 'PUT',
    path: `/v1/worlds/${id}`,
    headers: { ...auth(), ...json, 'if-match': ifMatch },
    body,
  });
  const patch = (body: string, ifMatch: string | string[] = '"2"'): Request => ({
    method: 'PATCH',
    path: `/v1/worlds/${worldId}`,
    headers: { ...auth(), 'content-type': 'application/merge-patch+json', 'if-match': ifMatch },
    body,
  });
  const importRaw = (body: Uint8Array | string, type = 'application/octet-stream'): Request => ({
    method: 'POST',
    path: '/v1/worlds/import',
    headers: { ...auth(), 'content-type': type },
    body,
  });
  const importForm = (parts: Parameters<typeof multipart>[0]): Request => {
    const form = multipart(parts);
    return { method: 'POST', path: '/v1/worlds/import', headers: { ...auth(), 'content-type': form.type }, body: form.body };
  };
  const get = (path: string): Request => ({ method: 'GET', path, headers: auth() });
  const move = (body: string, id = sessionId): Request => ({
    method: 'POST',
    path: `/v1/sessions/${id}/world-revision`,
    headers: { ...auth(), ...json },
    body,
  });
  const doc = (over: Record<string, unknown>) => JSON.stringify({ ...world, ...over });
  const many = <T>(n: number, item: (i: number) => T) => Array.from({ length: n }, (_, i) => item(i));

  const cases: Case[] = [
    // POST /v1/worlds
    { name: 'create: malformed JSON', request: () => createWorld('{"name": "x",'), status: 400, code: 'MALFORMED_BODY', path: '(body)' },
    { name: 'create: a JSON array, not a document', request: () => createWorld('[]'), status: 400, code: 'INVALID_WORLD', path: '(body)' },
    {
      name: 'create: not JSON (text/plain)',
      request: () => createWorld('name: x', { 'content-type': 'text/plain' }),
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: /json/i,
    },
    { name: 'create: name a number', request: () => createWorld(doc({ name: 5 })), status: 400, code: 'INVALID_WORLD', path: 'name' },
    {
      name: "create: a character's name a list",
      request: () => createWorld(doc({ characters: [{ id: 'a', name: ['x'] }] })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'characters.0.name',
    },
    {
      name: "create: a lorebook entry's keys a string",
      request: () => createWorld(doc({ lorebook: [{ id: 'e', keys: 'ship', content: 'x' }] })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'lorebook.0.keys',
    },
    {
      name: 'create: a seat naming no character',
      request: () => createWorld(doc({ seats: [{ id: 's', characterId: 'ghost' }] })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'seats.0.characterId',
    },
    { name: 'create: NUL in a string', request: () => createWorld('{"name":"Har\\u0000bour"}'), status: 400, code: 'INVALID_WORLD', path: 'name' },
    {
      name: 'create: NUL in a key',
      request: () => createWorld('{"name":"H","extensions":{"a\\u0000b":1}}'),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'extensions."a\\u0000b"',
    },
    {
      name: 'create: a lone high surrogate in the lore',
      request: () => createWorld('{"name":"H","lore":"tide \\ud800"}'),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'lore',
    },
    {
      name: 'create: a lone low surrogate in a key',
      request: () => createWorld('{"name":"H","pluginConfig":{"memory":{"\\udc00":1}}}'),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'pluginConfig.memory."\\udc00"',
    },
    {
      name: 'create: a __proto__ key at the top',
      request: () => createWorld('{"name":"H","__proto__":{"name":"polluted"}}'),
      status: 400,
      code: 'INVALID_WORLD',
      path: '"__proto__"',
    },
    {
      name: 'create: a __proto__ key in extensions',
      request: () => createWorld('{"name":"H","extensions":{"__proto__":{"x":1}}}'),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'extensions."__proto__"',
    },
    {
      name: 'create: 2,000 nested arrays in entries',
      request: () => createWorld(`{"name":"H","entries":{"deep":${nested(2000)}}}`),
      status: 400,
      code: 'INVALID_WORLD',
      path: /^entries\.deep(\.0)+$/,
    },
    {
      name: 'create: 2,000 nested arrays in extensions',
      request: () => createWorld(`{"name":"H","extensions":{"x":${nested(2000)}}}`),
      status: 400,
      code: 'INVALID_WORLD',
      path: /^extensions\.x(\.0)+$/,
    },
    {
      name: `create: ${WORLD_LIMITS.characters + 1} characters`,
      request: () => createWorld(doc({ characters: many(WORLD_LIMITS.characters + 1, (i) => ({ id: `c${i}`, name: `C${i}` })) })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'characters',
    },
    {
      name: `create: ${WORLD_LIMITS.lorebookEntries + 1} lorebook entries`,
      request: () => createWorld(doc({ lorebook: many(WORLD_LIMITS.lorebookEntries + 1, (i) => ({ id: `e${i}`, keys: [`k${i}`], content: 'x' })) })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'lorebook',
    },
    {
      name: `create: ${WORLD_LIMITS.openings + 1} openings`,
      request: () => createWorld(doc({ openings: many(WORLD_LIMITS.openings + 1, (i) => `Opening ${i}`) })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'openings',
    },
    {
      name: 'create: an opening past openingChars',
      request: () => createWorld(doc({ openings: ['😀'.repeat(WORLD_LIMITS.openingChars + 1)] })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'openings.0',
    },
    {
      name: 'create: lore past loreChars (code points)',
      request: () => createWorld(doc({ lore: '𝔸'.repeat(WORLD_LIMITS.loreChars + 1) })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'lore',
    },
    {
      name: 'create: a document past documentBytes',
      request: () => createWorld(doc({ extensions: { pad: 'x'.repeat(WORLD_LIMITS.documentBytes) } })),
      status: 413,
      code: 'WORLD_TOO_LARGE',
      path: '(body)',
    },
    {
      name: 'create: unpaired narrator-only marker in the lore',
      request: () => createWorld(doc({ lore: 'Open.\n<!-- narrator-only -->\nSecret.' })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'lore',
    },

    // PUT / PATCH /v1/worlds/:id
    { name: 'put: If-Match *', request: () => put(doc({}), '*'), status: 400, code: 'INVALID_IF_MATCH', path: 'If-Match' },
    { name: 'put: If-Match "abc"', request: () => put(doc({}), '"abc"'), status: 400, code: 'INVALID_IF_MATCH', path: 'If-Match' },
    { name: 'put: two If-Match headers', request: () => put(doc({}), ['"2"', '"2"']), status: 400, code: 'INVALID_IF_MATCH', path: 'If-Match' },
    { name: 'put: two revisions in one If-Match', request: () => put(doc({}), '"1", "2"'), status: 400, code: 'INVALID_IF_MATCH', path: 'If-Match' },
    {
      name: 'put: no If-Match',
      request: () => ({ ...put(doc({})), headers: { ...auth(), ...json } }),
      status: 428,
      code: 'WORLD_REVISION_REQUIRED',
      path: 'If-Match',
    },
    { name: 'put: a stale If-Match', request: () => put(doc({}), '"1"'), status: 412, code: 'WORLD_REVISION_MISMATCH', path: 'If-Match' },
    {
      name: 'put: a wrong type at a deep path',
      request: () => put(doc({ characters: [{ id: 'a', name: 'A', blueprint: { goals: 'win' } }] })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'characters.0.blueprint.goals',
    },
    { name: 'put: an id with %00', request: () => put(doc({}), '"2"', '%00'), status: 404, code: 'WORLD_NOT_FOUND', message: /world not found/ },
    { name: 'put: the id ..', request: () => put(doc({}), '"2"', '..'), status: 404, code: 'WORLD_NOT_FOUND', message: /world not found/ },
    {
      name: 'put: an id of 4,000 characters',
      request: () => put(doc({}), '"2"', 'a'.repeat(4000)),
      status: 404,
      code: 'WORLD_NOT_FOUND',
      message: /world not found/,
    },
    { name: 'patch: a wrong type', request: () => patch('{"characters":5}'), status: 400, code: 'INVALID_WORLD', path: 'characters' },
    {
      name: 'patch: an array replaces the document (RFC 7396): not a world',
      request: () => patch('[1,2]'),
      status: 400,
      code: 'INVALID_WORLD',
      path: '(body)',
    },
    { name: 'patch: a __proto__ key', request: () => patch('{"__proto__":{"name":"polluted"}}'), status: 400, code: 'INVALID_WORLD', path: '"__proto__"' },
    {
      name: 'patch: 2,000 nested arrays in extensions',
      request: () => patch(`{"extensions":{"x":${nested(2000)}}}`),
      status: 400,
      code: 'INVALID_WORLD',
      path: /^extensions\.x(\.0)+$/,
    },
    { name: 'patch: a lone surrogate in a tag', request: () => patch('{"tags":["\\udfff"]}'), status: 400, code: 'INVALID_WORLD', path: 'tags.0' },
    { name: 'patch: If-Match W/"x"', request: () => patch('{"tags":[]}', 'W/"x"'), status: 400, code: 'INVALID_IF_MATCH', path: 'If-Match' },

    // POST /v1/worlds/import, raw body
    { name: 'import: an empty body', request: () => importRaw(''), status: 400, code: 'EMPTY_BODY', path: '(body)' },
    {
      name: 'import: a JPEG',
      request: () => importRaw(Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46), 'image/png'),
      status: 400,
      code: 'NOT_A_CARD_FILE',
      path: '(body)',
    },
    {
      name: 'import: a PNG signature with its line endings converted',
      request: () => importRaw(Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0a, 0x1a, 0x0a, 0, 0)),
      status: 400,
      code: 'BAD_PNG',
      path: '(body)',
    },
    { name: 'import: a PNG of the signature alone', request: () => importRaw(png().subarray(0, 8)), status: 400, code: 'BAD_PNG', path: '(body)' },
    { name: 'import: a PNG cut inside a chunk', request: () => importRaw(cardPng(cardJson()).subarray(0, 60)), status: 400, code: 'BAD_PNG', path: '(body)' },
    { name: 'import: a PNG cut inside a chunk header', request: () => importRaw(png().subarray(0, 8 + 25 + 4)), status: 400, code: 'BAD_PNG', path: '(body)' },
    {
      name: 'import: a PNG chunk with a forged length (2 GiB)',
      request: () => importRaw(forgedLength(cardPng(cardJson()), 0x7ffffff0)),
      status: 400,
      code: 'BAD_PNG',
      path: '(body)',
    },
    {
      name: 'import: a PNG chunk with a length past PNG (4 GiB)',
      request: () => importRaw(forgedLength(cardPng(cardJson()), 0xffffffff)),
      status: 400,
      code: 'BAD_PNG',
      path: '(body)',
    },
    { name: 'import: a PNG with a CRC mismatch', request: () => importRaw(badCrc()), status: 400, code: 'BAD_PNG', path: '(body)' },
    {
      name: 'import: a PNG without a card chunk',
      request: () => importRaw(png([{ keyword: 'Comment', value: 'hi' }])),
      status: 400,
      code: 'NO_CARD_CHUNK',
      path: '(body)',
    },
    {
      name: 'import: a card chunk that is not base64',
      request: () => importRaw(png([{ keyword: 'chara', value: 'eyJzcGVj!!!' }])),
      status: 400,
      code: 'BAD_BASE64',
      path: 'tEXt chara',
    },
    {
      name: 'import: base64 of something that is not JSON',
      request: () => importRaw(cardPng('{"spec": chara')),
      status: 400,
      code: 'BAD_JSON',
      path: 'tEXt chara',
    },
    {
      name: 'import: base64 of Latin-1, not UTF-8',
      request: () => importRaw(png([{ keyword: 'chara', value: Buffer.from([0x7b, 0xe9, 0x7d]).toString('base64') }])),
      status: 400,
      code: 'BAD_TEXT_ENCODING',
      path: 'tEXt chara',
    },
    {
      name: 'import: malformed JSON card',
      request: () => importRaw('{"spec":"chara_card_v2",', 'application/json'),
      status: 400,
      code: 'BAD_JSON',
      path: '(body)',
    },
    {
      name: 'import: a card nested 2,000 arrays deep in its extensions',
      request: () => importRaw(`{"spec":"chara_card_v2","data":{"name":"M","extensions":{"x":${nested(2000)}}}}`),
      status: 400,
      code: 'TOO_DEEP',
      path: '(body)',
    },
    {
      name: 'import: a PNG card nested 2,000 deep',
      request: () => importRaw(cardPng(`{"spec":"chara_card_v2","data":{"name":"M","extensions":{"x":${nested(2000)}}}}`)),
      status: 400,
      code: 'TOO_DEEP',
      path: 'tEXt chara',
    },
    {
      name: 'import: NUL in a card string',
      request: () => importRaw('{"spec":"chara_card_v2","data":{"name":"M\\u0000"}}'),
      status: 400,
      code: 'BAD_STRING',
      path: 'data.name',
    },
    {
      name: 'import: a lone surrogate in a card key',
      request: () => importRaw('{"spec":"chara_card_v2","data":{"name":"M","extensions":{"\\ud800":1}}}'),
      status: 400,
      code: 'BAD_STRING',
      path: /^data\.extensions\./,
    },
    {
      name: 'import: a __proto__ key in a card',
      request: () => importRaw('{"spec":"chara_card_v2","data":{"name":"M","__proto__":{"x":1}}}'),
      status: 400,
      code: 'BAD_STRING',
      path: 'data."__proto__"',
    },
    {
      name: 'import: a card with a wrong type',
      request: () => importRaw(JSON.stringify(cardJson({ name: 5 }))),
      status: 400,
      code: 'INVALID_CARD',
      path: 'data.name',
    },
    {
      name: 'import: a lorebook entry with keys as a string',
      request: () => importRaw(JSON.stringify(cardJson({ character_book: { entries: [{ keys: 'k', content: 'c' }] } }))),
      status: 400,
      code: 'INVALID_CARD',
      path: 'data.character_book.entries.0.keys',
    },
    {
      name: 'import: a V1 card',
      request: () => importRaw(JSON.stringify({ name: 'M', first_mes: 'hi' })),
      status: 400,
      code: 'UNSUPPORTED_SPEC',
      path: 'spec',
    },
    {
      name: `import: a card with ${WORLD_LIMITS.openings + 1} greetings`,
      request: () => importRaw(JSON.stringify(cardJson({ alternate_greetings: many(WORLD_LIMITS.openings, (i) => `Hi ${i}`) }))),
      status: 400,
      code: 'LIMIT_EXCEEDED',
      path: 'data.alternate_greetings',
    },
    {
      name: `import: a card with ${WORLD_LIMITS.lorebookEntries + 1} entries`,
      request: () =>
        importRaw(
          JSON.stringify(cardJson({ character_book: { entries: many(WORLD_LIMITS.lorebookEntries + 1, (i) => ({ keys: [`k${i}`], content: 'c' })) } })),
        ),
      status: 400,
      code: 'LIMIT_EXCEEDED',
      path: 'data.character_book.entries',
    },
    {
      name: 'import: unpaired narrator-only in the scenario',
      request: () => importRaw(JSON.stringify(cardJson({ scenario: 'x\n<!-- narrator-only -->\ny' }))),
      status: 400,
      code: 'INVALID_CARD',
      path: 'data.scenario',
    },
    {
      name: 'import: a zip bomb (256 MiB of zeros declared)',
      request: () => importRaw(zip({ 'w/WORLD.md': enc(WORLD_MD), 'w/zeros.bin': new Uint8Array(256 * MB) })),
      status: 413,
      code: 'ARCHIVE_TOO_LARGE',
      path: '(archive)',
    },
    {
      name: 'import: a zip with a ../ path',
      request: () => importRaw(zip({ '../w/WORLD.md': enc(WORLD_MD) })),
      status: 400,
      code: 'BAD_ARCHIVE',
      path: '../w/WORLD.md',
    },
    {
      name: 'import: a zip with an absolute path',
      request: () => importRaw(zip({ 'WORLD.md': enc(WORLD_MD), '/etc/passwd': enc('x') })),
      status: 400,
      code: 'BAD_ARCHIVE',
      path: '/etc/passwd',
    },
    {
      name: 'import: a zip whose WORLD.md has a wrong type',
      request: () => importRaw(zip({ 'w/WORLD.md': enc('---\nname: [1]\n---\nx\n') })),
      status: 400,
      code: 'INVALID_WORLD',
      path: 'name',
    },
    {
      name: 'import: a truncated zip',
      request: () => importRaw(zip({ 'w/WORLD.md': enc(WORLD_MD) }).subarray(0, 40)),
      status: 400,
      code: 'BAD_ARCHIVE',
      path: '(archive)',
    },
    {
      name: 'import: a 50 MB body declared by Content-Length',
      request: () => ({ ...importRaw(''), headers: { ...auth(), 'content-type': 'image/png', 'content-length': String(50 * MB) }, body: stream(50 * MB) }),
      status: 413,
      code: 'BODY_TOO_LARGE',
      message: /16777216 bytes/,
      maxWritten: 32 * MB,
    },
    {
      name: 'import: a 50 MB chunked body',
      request: () => ({ ...importRaw(''), headers: { ...auth(), 'content-type': 'image/png', 'transfer-encoding': 'chunked' }, body: stream(50 * MB) }),
      status: 413,
      code: 'BODY_TOO_LARGE',
      message: /16777216 bytes/,
      maxWritten: 32 * MB,
    },

    {
      name: 'import: a gzip bomb (50 MiB of zeros as a 50 KB gzip body)',
      request: () => ({ ...importRaw(gzipSync(new Uint8Array(50 * MB))), headers: { ...auth(), 'content-type': 'image/png', 'content-encoding': 'gzip' } }),
      status: 413,
      code: 'BODY_TOO_LARGE',
      message: /16777216 bytes/,
    },
    {
      name: 'import: a body that is not the gzip it says',
      request: () => ({ ...importRaw('not gzip at all'), headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
      status: 400,
      code: 'MALFORMED_BODY',
      path: '(body)',
    },
    {
      name: 'import: an unknown content-encoding',
      request: () => ({ ...importRaw('{}'), headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'compress' } }),
      status: 415,
      code: 'UNSUPPORTED_ENCODING',
      message: /compress/,
    },

    // POST /v1/worlds/import, multipart
    {
      name: 'import (multipart): a 50 MB chunked upload',
      request: () => {
        const head = multipart([{ name: 'file', filename: 'big.png', type: 'image/png', data: '' }]).body.subarray(0, -50);
        const rest = stream(50 * MB);
        let first = true;
        return {
          ...importRaw(''),
          headers: { ...auth(), 'content-type': multipart([]).type, 'transfer-encoding': 'chunked' },
          body: () => (first ? ((first = false), new Uint8Array(head)) : rest()),
        };
      },
      status: 413,
      code: 'BODY_TOO_LARGE',
      message: /16777216 bytes/,
      maxWritten: 32 * MB,
    },
    {
      name: 'import (multipart): two files',
      request: () =>
        importForm([
          { name: 'file', filename: 'a.png', type: 'image/png', data: cardPng(cardJson()) },
          { name: 'file', filename: 'b.png', type: 'image/png', data: cardPng(cardJson()) },
        ]),
      status: 400,
      code: 'BAD_MULTIPART',
      path: 'file',
      message: /Too many files/,
    },
    {
      name: 'import (multipart): the file under another field name',
      request: () => importForm([{ name: 'card', filename: 'a.png', type: 'image/png', data: cardPng(cardJson()) }]),
      status: 400,
      code: 'BAD_MULTIPART',
      path: 'file',
      message: /Unexpected/,
    },
    {
      name: 'import (multipart): a text field',
      request: () =>
        importForm([
          { name: 'note', data: 'hello' },
          { name: 'file', filename: 'a.png', data: cardPng(cardJson()) },
        ]),
      status: 400,
      code: 'BAD_MULTIPART',
      path: 'file',
      message: /fields/i,
    },
    { name: 'import (multipart): no file', request: () => importForm([]), status: 400, code: 'EMPTY_BODY', path: '(body)' },
    {
      name: 'import (multipart): a bad PNG',
      request: () => importForm([{ name: 'file', filename: 'a.png', type: 'image/png', data: forgedLength(cardPng(cardJson()), 0x7ffffff0) }]),
      status: 400,
      code: 'BAD_PNG',
      path: '(body)',
    },
    {
      name: 'import (multipart): a file past the limit',
      // streamed as the 50 MB uploads are, so the client stops once the server answers (written whole, the
      // rest of the upload could meet the closed connection before the answer was read: ECONNRESET under load)
      request: () => {
        const form = importForm([{ name: 'file', filename: 'a.png', type: 'image/png', data: new Uint8Array(17 * MB) }]);
        return { ...form, body: chunksOf(form.body as Uint8Array) };
      },
      status: 413,
      code: 'BODY_TOO_LARGE',
      message: /16777216 bytes/,
    },

    // GET /v1/worlds/:id/export
    {
      name: 'export: an unknown format',
      request: () => get(`/v1/worlds/${worldId}/export?format=card-v4`),
      status: 400,
      code: 'INVALID_INPUT',
      path: 'format',
    },
    {
      name: 'export: an unknown query parameter',
      request: () => get(`/v1/worlds/${worldId}/export?format=card-v2&debug=1`),
      status: 400,
      code: 'INVALID_INPUT',
      path: '(query)',
      message: /debug/,
    },
    {
      name: 'export: a revision that is not a number',
      request: () => get(`/v1/worlds/${worldId}/export?revision=abc`),
      status: 400,
      code: 'INVALID_INPUT',
      path: 'revision',
    },
    {
      name: 'export: an unknown container',
      request: () => get(`/v1/worlds/${worldId}/export?format=card-v2&container=gif`),
      status: 400,
      code: 'INVALID_INPUT',
      path: 'container',
    },
    {
      name: 'export: format given twice',
      request: () => get(`/v1/worlds/${worldId}/export?format=card-v2&format=card-v3`),
      status: 400,
      code: 'INVALID_INPUT',
      path: 'format',
    },
    { name: 'export: an id with %00', request: () => get('/v1/worlds/%00/export'), status: 404, code: 'WORLD_NOT_FOUND', message: /world not found/ },
    {
      name: 'export: a revision that does not exist',
      request: () => get(`/v1/worlds/${worldId}/export?revision=99`),
      status: 404,
      code: 'WORLD_NOT_FOUND',
      message: /not found/,
    },

    // POST /v1/sessions/:id/world-revision
    { name: 'world-revision: a revision as a string', request: () => move('{"revision":"2"}'), status: 400, code: 'INVALID_INPUT', path: 'revision' },
    { name: 'world-revision: revision 1', request: () => move('{"revision":1}'), status: 400, code: 'INVALID_INPUT', path: 'revision' },
    {
      name: 'world-revision: a revision the world does not have',
      request: () => move('{"revision":99}'),
      status: 400,
      code: 'UNKNOWN_WORLD_REVISION',
      path: 'revision',
    },
    {
      name: 'world-revision: an unknown key',
      request: () => move('{"revision":2,"force":true}'),
      status: 400,
      code: 'INVALID_INPUT',
      path: /force|^$|\(body\)/,
    },
    { name: 'world-revision: malformed JSON', request: () => move('{"revision":'), status: 400, code: 'MALFORMED_BODY', path: '(body)' },
    { name: 'world-revision: a session id that is not a UUID', request: () => move('{}', '..'), status: 404, code: 'SESSION_NOT_FOUND', message: /not found/ },
  ];

  /** A body of `total` bytes in 64 KiB chunks, made as it is sent. */
  /** `bytes` in 64 KiB chunks, for `send` to stream. */
  function chunksOf(bytes: Uint8Array): () => Uint8Array | null {
    let at = 0;
    return () => {
      if (at >= bytes.length) return null;
      const chunk = bytes.subarray(at, at + 64 * 1024);
      at += chunk.length;
      return chunk;
    };
  }

  function stream(total: number): () => Uint8Array | null {
    const chunk = new Uint8Array(64 * 1024);
    let sent = 0;
    return () => {
      if (sent >= total) return null;
      sent += chunk.length;
      return chunk;
    };
  }

  it('has at least 40 hostile inputs', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it('a card sent gzip-encoded, or as the multipart field "file", still imports', async () => {
    const card = JSON.stringify({ spec: 'chara_card_v2', spec_version: '2.0', data: { name: 'Mira 灯', first_mes: 'Hello.' } });
    const gzipped = await send(covel.baseUrl, {
      ...importRaw(gzipSync(card)),
      headers: { ...auth(), 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    const form = await send(covel.baseUrl, importForm([{ name: 'file', filename: 'mira.png', type: 'image/png', data: cardPng(JSON.parse(card)) }]));
    expect([gzipped.status, form.status]).toEqual([201, 201]);
    expect([gzipped.json, form.json].map((w) => (w as unknown as { name: string }).name)).toEqual(['Mira 灯', 'Mira 灯']);
  });

  it.each(cases.map((c) => [c.name, c] as const))(
    '%s → a 4xx naming the problem, nothing appended',
    async (_name, c) => {
      const before = await eventCount();
      const res = await send(covel.baseUrl, c.request());
      expect({ status: res.status, code: res.json?.code }).toEqual({ status: c.status, code: c.code });
      if (c.path !== undefined)
        expect(res.json?.issues?.map((i) => i.path)).toContainEqual(typeof c.path === 'string' ? c.path : expect.stringMatching(c.path));
      if (c.message !== undefined) expect(res.json?.message).toMatch(c.message);
      if (c.maxWritten !== undefined) expect(res.written).toBeLessThan(c.maxWritten);
      expect(res.text).not.toContain('\u0000'); // a NUL is never echoed raw
      expect(await eventCount()).toBe(before);
    },
    60_000,
  );
});
