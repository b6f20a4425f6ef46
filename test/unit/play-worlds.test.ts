import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlayClient } from '../../apps/play/play-client';
import { displayWidth } from '../../apps/play/wrap';
import { worldToCard } from '../../libs/world-files';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

const root = join(__dirname, '..', '..');
const PLAY = ['-r', './tools/register.js', 'apps/play/main.ts'];
const { COVEL_URL, COVEL_API_KEY, COVEL_WORLD, COVEL_SESSION_ID, COVEL_DATA_DIR, PORT, NO_COLOR, FORCE_COLOR, COLUMNS, ...bare } = process.env;
const WIDTH = 60;

/** `npm run play` as a process with pipes, `COLUMNS` columns wide: its exit code and everything it printed. */
function runPlay(args: string[], env: Record<string, string>, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...PLAY, ...args], {
    cwd: root,
    env: { ...bare, COLUMNS: String(WIDTH), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** What was printed with each list item's wrapped lines joined back (its continuation lines are indented by 4). */
const unwrapped = (out: string) => out.replace(/\n {4}(?=\S)/g, ' ');
/** What was printed as one line (a notice wraps at the width, between words). */
const flat = (out: string) => out.replace(/\s+/g, ' ');
/** The lines printed, without the prompts (in a pipe, `> ` is written before each line read, and what follows goes on after it). */
const printedLines = (out: string) => out.split('\n').map((line) => line.replace(/^(> )+/, ''));
const sessionsIn = (out: string) => [...out.matchAll(/Session ([0-9a-f-]{36})/g)].map((m) => m[1]);

/** A world of the tenant's with a name in three scripts and an emoji. */
const lighthouse = (name: string) => ({
  name,
  description: 'A lighthouse on a reef.',
  lore: 'The keeper writes down every ship that passes, even the ones that are not there.',
  characters: [{ id: 'keeper', name: 'Ysolde', type: 'npc', description: 'The keeper, who speaks to the lamp.' }],
  openings: ['The lamp hums above you.'],
  plugins: ['narrator'],
});

/** Issue 29 item 5: the terminal player plays a tenant's world, lists the worlds, imports a card and plays it. */
describe('npm run play with the worlds of a tenant', () => {
  let covel: EmbeddedEngine;
  let dir: string;

  beforeAll(async () => {
    covel = await startEmbedded();
    dir = mkdtempSync(join(tmpdir(), 'covel-play-worlds-'));
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const tenant = async (name: string) => {
    const { apiKey } = await covel.engine.tenants.create(name);
    return { client: new PlayClient(covel.baseUrl, apiKey), env: { COVEL_URL: covel.baseUrl, COVEL_API_KEY: apiKey, COVEL_DATA_DIR: covel.dataDir } };
  };
  const createWorld = (client: PlayClient, body: unknown) => client.request<{ id: string; revision: number }>('POST', '/v1/worlds', body);
  const sentToModel = async (client: PlayClient, sessionId: string) => JSON.stringify(await client.request('GET', `/v1/sessions/${sessionId}/llm-calls`));

  it('--world <id of a world of yours>: the session plays its current revision, named in the first line; an unknown id is refused in words', async () => {
    const { client, env } = await tenant('play-world');
    const name = 'Saltmarrow Light 灯塔 ورن 🌊';
    const { id } = await createWorld(client, lighthouse(name));
    const edited = { ...lighthouse(name), lore: 'The lamp has gone dark, and the keeper counts the dark instead.' };
    const put = await fetch(`${covel.baseUrl}/v1/worlds/${id}`, {
      method: 'PUT',
      headers: { ...client.authHeaders(), 'content-type': 'application/json', 'if-match': '"1"' },
      body: JSON.stringify(edited),
    });
    expect(put.status).toBe(200);

    // the id as typed, in capitals: the same world
    const { code, stdout, stderr } = await runPlay(['--world', id.toUpperCase()], env, 'Look around\n/quit\n');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const [sessionId] = sessionsIn(stdout);
    expect(flat(stdout)).toContain(`Session ${sessionId} in ${name}, revision 2. Type what you do`);
    expect(await client.session(sessionId)).toMatchObject({ worldId: id, worldRevision: 2 });
    expect(await sentToModel(client, sessionId)).toContain('counts the dark instead');

    // a world nobody has (or another tenant's): the player says so, and how to find one
    const other = await tenant('play-world-other');
    const refused = await runPlay(['--world', id], other.env, '/quit\n');
    expect(refused.code).toBe(1);
    expect(flat(refused.stderr)).toContain(`There is no world "${id}" for you: /worlds lists the worlds you can play`);
  }, 90_000);

  it('/worlds lists the built-in worlds, then yours (id, name, revision, counts), a page at a time; /world <id> plays one', async () => {
    const { client, env } = await tenant('play-worlds-list');
    const names = Array.from({ length: 21 }, (_, i) => `${['灯塔', 'ورن', 'Zoë 🧑‍🚀', 'אור'][i % 4]} world ${i + 1}`);
    const ids: string[] = [];
    for (const name of names)
      ids.push((await createWorld(client, { ...lighthouse(name), lorebook: [{ id: 'ledger', keys: ['ledger'], content: 'A ledger.' }] })).id);

    const { code, stdout, stderr } = await runPlay([], env, `/worlds\n/worlds next\n/worlds next\n/world ${ids[20]}\n/quit\n`);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const text = unwrapped(stdout);
    // the first page: the built-in world, then 19 of the tenant's; the second: the last 2
    const [first, rest] = text.split('More worlds:');
    expect(first).toMatch(/^ {2}- emberback — Emberback · built-in · \d+ characters?, \d+ lorebook entr(y|ies), \d+ openings?$/m);
    expect(first).toContain('More: /worlds next.');
    names.forEach((name, i) => {
      const line = `  - ${ids[i]} — ${name} · yours, revision 1 · 1 character, 1 lorebook entry, 1 opening`;
      expect(i < 19 ? first : rest).toContain(`${line}\n`);
      expect(text.split(line).length).toBe(2); // listed once
    });
    expect(rest).toContain('No more worlds: /worlds lists them from the start.');
    // every line fits the terminal, whatever the script of a name
    for (const line of printedLines(stdout)) expect(displayWidth(line)).toBeLessThanOrEqual(WIDTH);
    // /world <id>: a new session in that world
    const sessions = sessionsIn(stdout);
    expect(sessions).toHaveLength(2);
    expect(await client.session(sessions[1])).toMatchObject({ worldId: ids[20], worldRevision: 1 });
    expect(flat(stdout)).toContain(`Session ${sessions[1]} in ${names[20]}, revision 1.`);
  }, 90_000);

  it('/import <card file>: the card becomes a world of yours, shown, and a new session plays it; a bad file says what is wrong and creates nothing', async () => {
    const { client, env } = await tenant('play-import');
    const character = 'Ysolde 灯塔守 ورن 🌊';
    const document = {
      name: character,
      lore: 'A reef, a lamp, and a keeper who talks to it.',
      characters: [{ id: 'keeper', name: character, type: 'npc', description: 'The keeper, who speaks to the lamp in a voice like tide.' }],
      openings: ['The lamp hums above you.', 'Salt on the stairs.'],
      lorebook: [{ id: 'ledger', keys: ['ledger'], content: 'The ledger has a page for every drowned name, written before the drowning.' }],
    };
    const json = worldToCard(document, { format: 'card-v2', container: 'json' });
    const png = worldToCard(document, { format: 'card-v3', container: 'png' });
    if (!json.ok || !png.ok) throw new Error('worldToCard failed');
    const folder = join(dir, 'cartes ✨ ورن');
    mkdirSync(folder, { recursive: true });
    const jsonFile = join(folder, 'карта 灯塔 🌊.json');
    const pngFile = join(folder, 'card  two.png'); // two spaces: the name is kept as typed
    writeFileSync(jsonFile, json.bytes);
    writeFileSync(pngFile, png.bytes);
    // bad files: not a card, a card with a schema error (keys as one string), no such file, a folder
    writeFileSync(join(folder, 'notes.txt'), 'hello, not a card');
    const broken = JSON.parse(Buffer.from(json.bytes).toString('utf8')) as { data: { character_book: { entries: { keys: unknown }[] } } };
    broken.data.character_book.entries[0].keys = 'ledger';
    writeFileSync(join(folder, 'broken.json'), JSON.stringify(broken));
    const worldsBefore = (await client.worlds({ limit: 100 })).items.length;

    const input = [
      `/import ${join(folder, 'notes.txt')}`,
      `/import ${join(folder, 'broken.json')}`,
      `/import ${join(folder, 'missing.png')}`,
      `/import ${folder}`,
      `/import ${jsonFile}`,
      'Open the ledger',
      `/import "${pngFile}"`,
      '/quit',
    ].join('\n');
    const { code, stdout, stderr } = await runPlay(['--world', ''], env, `${input}\n`);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const text = flat(stdout);
    expect(stdout).toMatch(/^(> )*! notes\.txt was not imported \(NOT_A_CARD_FILE\):\n {2}\(body\): neither a PNG card nor/m);
    expect(stdout).toMatch(/^(> )*! broken\.json was not imported \(INVALID_CARD\):\n {2}data\.character_book\.entries\.0\.keys: \S/m);
    expect(text).toContain(`! Nothing imported: there is no file ${join(folder, 'missing.png')}.`);
    expect(text).toContain(`! Nothing imported: ${folder} is a folder: zip it first`);

    // the two cards: each a new world of the tenant's, shown with its counts, and a session in it
    const imported = [...unwrapped(stdout).matchAll(/^Imported (.+), a world of yours now:\n {2}- ([0-9a-f-]{36}) — (.+)$/gm)].map((m) => m.slice(1));
    expect(imported).toEqual([
      ['карта 灯塔 🌊.json', expect.any(String), `${character} · yours, revision 1 · 1 character, 1 lorebook entry, 2 openings`],
      ['card  two.png', expect.any(String), `${character} · yours, revision 1 · 1 character, 1 lorebook entry, 2 openings`],
    ]);
    const [first, second] = imported.map((m) => m[1]);
    expect((await client.worlds({ limit: 100 })).items.length).toBe(worldsBefore + 2); // the bad files created nothing
    const sessions = sessionsIn(stdout);
    expect(sessions).toHaveLength(3); // no world, then one per import
    expect(text).toContain(`Session ${sessions[1]} in ${character}, revision 1.`);
    expect(await client.session(sessions[1])).toMatchObject({ worldId: first, worldRevision: 1 });
    expect(await client.session(sessions[2])).toMatchObject({ worldId: second, worldRevision: 1 });
    // the turn played on the card: the narrator read its character and the lorebook entry its key fired
    const sent = await sentToModel(client, sessions[1]);
    expect(sent).toContain('speaks to the lamp in a voice like tide');
    expect(sent).toContain('a page for every drowned name');
    for (const line of printedLines(stdout)) expect(displayWidth(line)).toBeLessThanOrEqual(WIDTH);
  }, 120_000);
});
