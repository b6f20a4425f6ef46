import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProviderEmulator, type Reply, type ScriptedCall } from '../../libs/emulator';
import { rebuildInline, type StoredEvent } from '../../libs/events';
import { engineInlineProjections } from '../../libs/engine';
import { sql } from 'kysely';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { auditedIdentical, playTurns } from '../support/turns';

/**
 * Issue 12 part 5, images end to end: the embedded engine (PGlite on disk, media as files) with the
 * painter plugin's tool `paint` (`ctx.assets.generate`) and function runtime `chime` (audio on turn
 * 2), against an emulator whose script makes the narrator paint picture n on "paint n". Two engines:
 * the story slot on an image-capable model (gpt-4.1-mini) and the same slot marked text-only in llm.toml.
 */
const PLUGINS = join(__dirname, '..', 'fixtures', 'image-plugins');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { picture } = require('../fixtures/image-plugins/painter/server/index.js') as { picture: (n: number) => Buffer };

const tool = (name: string, args: unknown): Reply => ({ kind: 'tool', name, args });

function script(call: ScriptedCall): Reply | undefined {
  const players = call.transcript.filter((m) => m.role === 'user').map((m) => m.content);
  const n = /^paint (\d)$/.exec(players.at(-1) ?? '')?.[1];
  const results = call.transcript.filter((m) => m.role === 'tool').length;
  if (!n) return undefined; // the emulator's story text
  if (n === '2' && results === 0) return tool('smudge', {}); // generates, then throws: nothing stored, nothing shown
  if (results === (n === '2' ? 1 : 0)) return tool('paint', n === '1' ? { n: 1, caption: 'A lighthouse\nat dusk.' } : { n: Number(n) });
  return undefined;
}

const TURNS = ['paint 1', 'paint 2', 'paint 3', 'look around'];

type Body = { messages: { role: string; content: string | { type: string; text?: string; image_url?: { url: string } }[] }[] };
const of = <T extends StoredEvent['type']>(events: StoredEvent[], type: T) => events.filter((e): e is Extract<StoredEvent, { type: T }> => e.type === type);

/** Each turn's first narrator request: its recorded body, layout, and what went on the wire. */
function narratorRequests(events: StoredEvent[], turnIds: string[]) {
  const calls = of(events, 'llm.calling@1').filter((e) => e.data.runtimeId === 'narrator' && (e.data.step ?? 1) === 1);
  return turnIds.map((turnId) => {
    const call = calls.find((c) => c.data.turnId === turnId)!;
    return { body: JSON.parse(call.data.body) as Body, recorded: call.data.body, sections: call.data.layout!.messageSections };
  });
}

const imagesIn = (body: Body) =>
  body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image_url').map((p) => p.image_url!.url) : []));

async function play(covel: EmbeddedEngine) {
  const client = await covel.newTenant();
  const { id } = await client.createSession({});
  const turnIds = await playTurns(client, id, TURNS);
  return { client, id, turnIds, events: await covel.engine.store.readStream(id) };
}

describe('images shown to the player (issue 12 part 5)', () => {
  let emulator: ProviderEmulator;
  let seeing: EmbeddedEngine;
  let blind: EmbeddedEngine;
  beforeAll(async () => {
    emulator = await new ProviderEmulator({ script }).start();
    // on disk: its media are files beside the database (read below)
    seeing = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS, COVEL_EMULATOR_URL: emulator.url }, undefined, { onDisk: true });
    const llm = join(seeing.dataDir, 'text-only.toml');
    writeFileSync(
      llm,
      '[slots.story]\nprotocol = "openai-chat"\nmodel = "gpt-4.1-mini"\ncontextWindow = 128000\nmaxOutputTokens = 1024\nimageInput = false\n\n' +
        '[slots.fast]\nprotocol = "openai-chat"\nmodel = "gpt-4.1-nano"\ncontextWindow = 128000\nmaxOutputTokens = 512\n',
    );
    blind = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS, COVEL_EMULATOR_URL: emulator.url, COVEL_LLM_CONFIG: llm }, undefined, { onDisk: true });
  }, 120_000);
  afterAll(async () => {
    await blind?.stop();
    await seeing?.stop();
    await emulator?.stop();
  });

  it('three images over three turns: the fourth story request carries the last two inline on an image-capable model, the history prefix unchanged, the audit identical', async () => {
    const { client, id, turnIds, events } = await play(seeing);

    // the log: one asset.generated per picture and the chime (the smudge tool failed: nothing), no bytes
    const assets = of(events, 'asset.generated@1');
    expect(assets.map((a) => [a.data.media.modality, a.data.media.mimeType, a.data.media.byteLength])).toEqual([
      ['image', 'image/png', picture(1).length],
      ['image', 'image/png', picture(2).length],
      ['audio', 'audio/ogg', 10],
      ['image', 'image/png', picture(3).length],
    ]);
    expect(JSON.stringify(events)).not.toContain(picture(1).toString('base64'));
    const smudged = of(events, 'tool.completed@1').find((e) => e.data.name === 'smudge')!;
    expect([smudged.data.ok, smudged.data.errorCode]).toEqual([false, 'TOOL_FAILED']);

    // the history: the input, the message the player sees (media, no text), its description row, the story
    const messages = (
      await client.request<{ turnId: string; role: string; sourceType: string; text: string; media?: { mediaId: string } }[]>(
        'GET',
        `/v1/sessions/${id}/messages`,
      )
    ).map((m) => ({ turn: turnIds.indexOf(m.turnId) + 1, role: m.role, sourceType: m.sourceType, text: m.text, media: m.media?.mediaId ?? null }));
    const turn = (n: number) => messages.filter((m) => m.turn === n).map(({ turn: _t, ...m }) => m);
    const [one, two, three] = [0, 1, 3].map((i) => assets[i].data.media.mediaId);
    expect(turn(1)).toEqual([
      { role: 'user', sourceType: 'player', text: 'paint 1', media: null },
      { role: 'assistant', sourceType: 'runtime', text: '', media: one },
      { role: 'user', sourceType: 'system', text: 'An image was shown to the player here, showing: A lighthouse at dusk.', media: null },
      expect.objectContaining({ role: 'assistant', sourceType: 'runtime', media: null }),
    ]);
    expect(turn(2).map((m) => [m.sourceType, m.text === '' ? m.media : m.text])).toEqual([
      ['player', 'paint 2'],
      ['runtime', two],
      ['system', 'An image was shown to the player here, showing: picture number 2'],
      ['runtime', expect.any(String)],
      ['runtime', assets[2].data.media.mediaId], // the chime: the player hears it, no description row
    ]);
    expect(turn(4).map((m) => m.sourceType)).toEqual(['player', 'runtime']);

    // the client reads the bytes; another tenant, another session and a malformed id do not
    const res = await fetch(`${seeing.baseUrl}/v1/sessions/${id}/media/${two}`, { headers: auth(client) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer()).equals(picture(2))).toBe(true);
    const stranger = await seeing.newTenant('stranger');
    const { id: theirs } = await stranger.createSession({});
    expect((await fetch(`${seeing.baseUrl}/v1/sessions/${id}/media/${two}`, { headers: auth(stranger) })).status).toBe(404);
    expect((await fetch(`${seeing.baseUrl}/v1/sessions/${theirs}/media/${two}`, { headers: auth(stranger) })).status).toBe(404);
    const { id: mine } = await client.createSession({});
    expect((await fetch(`${seeing.baseUrl}/v1/sessions/${mine}/media/${two}`, { headers: auth(client) })).status).toBe(404);
    const bad = await fetch(`${seeing.baseUrl}/v1/sessions/${id}/media/not-a-uuid`, { headers: auth(client) });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('mediaId');
    // the embedded default keeps media as files: the four submitted, the smudge never stored
    const tenant = readdirSync(join(seeing.dataDir, 'media')).find((t) => readdirSync(join(seeing.dataDir, 'media', t)).includes(id))!;
    expect(readdirSync(join(seeing.dataDir, 'media', tenant, id)).filter((f) => !f.endsWith('.json'))).toHaveLength(4);

    // the story requests: turn 2 shows picture 1, turn 3 pictures 1-2, turn 4 pictures 2-3 (oldest first), lengths only in the log
    const requests = narratorRequests(events, turnIds);
    const recordedImages = requests.map((r) => imagesIn(r.body));
    expect(recordedImages).toEqual([
      [],
      [`data:image/png;base64,[${picture(1).length} bytes]`],
      [`data:image/png;base64,[${picture(1).length} bytes]`, `data:image/png;base64,[${picture(2).length} bytes]`],
      [`data:image/png;base64,[${picture(2).length} bytes]`, `data:image/png;base64,[${picture(3).length} bytes]`],
    ]);
    const sent = emulator.requests.find((r) => r.raw.includes('look around') && r.raw.includes(picture(3).toString('base64')))!;
    expect(sent.raw).toContain(`data:image/png;base64,${picture(2).toString('base64')}`);
    expect(sent.raw).not.toContain(picture(1).toString('base64'));
    // the recent-images message: after the turn context, before the input; its text lists what it carries
    const fourth = requests[3];
    const at = fourth.sections.indexOf('recent-images');
    expect(fourth.sections.slice(at - 1, at + 2)).toEqual(['turn-context', 'recent-images', 'player-input']);
    const shown = fourth.body.messages[at].content as { type: string; text?: string }[];
    expect(shown[0].text).toBe('The images most recently shown to the player are attached, oldest first:\n1. picture number 2\n2. picture number 3');
    expect(fourth.sections.at(at + 1)).toBe('player-input');

    // the history prefix before the recent-images message is byte-identical across turns: each turn's
    // request starts with the previous turn's system prompt and history, byte for byte
    for (let t = 1; t < 3; t++) {
      const [a, b] = [requests[t], requests[t + 1]];
      const historyEnd = a.sections.lastIndexOf('history') + 1;
      expect(JSON.stringify(b.body.messages.slice(0, historyEnd))).toBe(JSON.stringify(a.body.messages.slice(0, historyEnd)));
      const prefix = a.recorded.slice(0, a.recorded.indexOf(JSON.stringify(a.body.messages[historyEnd])));
      expect(b.recorded.startsWith(prefix)).toBe(true);
    }

    expect(await auditedIdentical(seeing.engine, id, turnIds)).toEqual([true, true, true, true]);
    // the audit reads the bytes again and checks them (the log holds their length and sha256): other
    // bytes of the same length under picture 3's id are not the request that was sent
    const file = join(seeing.dataDir, 'media', tenant, id, three);
    writeFileSync(file, Buffer.alloc(picture(3).length, 1));
    expect(await auditedIdentical(seeing.engine, id, turnIds)).toEqual([true, true, true, false]);
    writeFileSync(file, picture(3));
    expect(await auditedIdentical(seeing.engine, id, turnIds)).toEqual([true, true, true, true]);
  }, 120_000);

  it('a tool call that generates a picture: its result carries the staged notice in the instruction language (English; Chinese in a zh-Hans session), as the next step reads it', async () => {
    // spec §6 (rule 6.17): the framework's notice that what a call generated takes effect when the turn ends
    const notices: [Record<string, string>, string][] = [
      [{}, 'Staged: what this call emitted or generated takes effect when this turn ends, not before.'],
      [{ locale: 'zh-CN' }, '已暂存：本次调用发出或生成的内容在本回合结束时生效，而不是在此之前。'],
    ];
    for (const [options, staged] of notices) {
      const client = await seeing.newTenant();
      const { id } = await client.createSession(options);
      const turnIds = await playTurns(client, id, ['paint 1']);
      const events = await seeing.engine.store.readStream(id);
      // the call emitted no event: the notice is there for the picture alone
      expect(of(events, 'runtime.activated@1')).toEqual([]);
      const [asset] = of(events, 'asset.generated@1');
      const painted = of(events, 'tool.completed@1').filter((e) => e.data.name === 'paint');
      expect(painted).toHaveLength(1);
      expect(JSON.parse(painted[0].data.content)).toEqual({ ok: true, data: { painted: 1, mediaId: asset.data.media.mediaId }, staged });
      // the narrator's next step reads the result as the log recorded it
      const next = of(events, 'llm.calling@1').find((e) => e.data.runtimeId === 'narrator' && e.data.step === 2)!;
      const read = (JSON.parse(next.data.body) as Body).messages.filter((m) => m.role === 'tool').map((m) => m.content);
      expect(read).toEqual([painted[0].data.content]);
      expect(await auditedIdentical(seeing.engine, id, turnIds)).toEqual([true]);
    }
  }, 120_000);

  it('a text-only model: no recent-images message and no image, only the description rows in the history; the audit identical', async () => {
    const { id, turnIds, events } = await play(blind);
    expect(of(events, 'asset.generated@1').filter((a) => a.data.media.modality === 'image')).toHaveLength(3);
    const requests = narratorRequests(events, turnIds);
    for (const r of requests) {
      expect(imagesIn(r.body)).toEqual([]);
      expect(r.sections).not.toContain('recent-images');
    }
    const history = requests[3].body.messages.map((m) => m.content).filter((c): c is string => typeof c === 'string');
    expect(history.filter((c) => c.startsWith('An image was shown to the player here'))).toEqual([
      'An image was shown to the player here, showing: A lighthouse at dusk.',
      'An image was shown to the player here, showing: picture number 2',
      'An image was shown to the player here, showing: picture number 3',
    ]);
    expect(await auditedIdentical(blind.engine, id, turnIds)).toEqual([true, true, true, true]);

    // replay: the rows (media references and description rows included) rebuilt from the events are the same
    const rows = async () => (await sql`select * from turn_messages where session_id = ${id} order by ord`.execute(blind.engine.database.db)).rows;
    const live = await rows();
    expect(live.filter((r) => (r as { media: unknown }).media !== null)).toHaveLength(4);
    expect((await rebuildInline({ db: blind.engine.database.db, projections: engineInlineProjections })).failures).toEqual([]);
    expect(await rows()).toEqual(live);
  }, 120_000);
});

function auth(client: unknown): Record<string, string> {
  return { authorization: `Bearer ${(client as { apiKey: string }).apiKey}` };
}
