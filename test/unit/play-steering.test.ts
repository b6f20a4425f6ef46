/**
 * Issue 30 item 6, the terminal player: `/select N`, `/undo`, `/edit` (`/edit!`), `/branch`, run as
 * `npm run play` runs (a process with pipes, its lines handled one at a time) against the embedded
 * engine; what it printed, and what the engine then holds (read over the API and from the log).
 *
 * `/select` uses routes the engine has had since issue 16; `/undo`, `/edit` and `/branch` need the
 * revert, edit and branch routes of issue 30 (each test says which).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PlayClient, type StoryMessage } from '../../apps/play/play-client';
import { displayWidth } from '../../apps/play/wrap';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

const root = join(__dirname, '..', '..');
const PLAY = ['-r', './tools/register.js', 'apps/play/main.ts'];
const { COVEL_URL, COVEL_API_KEY, COVEL_WORLD, COVEL_SESSION_ID, COVEL_DATA_DIR, PORT, NO_COLOR, FORCE_COLOR, COLUMNS, ...bare } = process.env;
const WIDTH = 72;

/** `npm run play` as a process with pipes: its exit code and everything it printed. */
function runPlay(args: string[], env: Record<string, string>, lines: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...PLAY, ...args], { cwd: root, env: { ...bare, COLUMNS: String(WIDTH), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(`${lines.join('\n')}\n`);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** What was printed as one line (notices and the story wrap at the width, between words). */
const flat = (out: string) => out.replace(/\s+/g, ' ');
const storyOf = (messages: readonly StoryMessage[], turnId: string) =>
  messages
    .filter((m) => m.turnId === turnId && m.role === 'assistant' && m.outputKind === 'story')
    .map((m) => m.text)
    .join(' ');
const inputs = (messages: readonly StoryMessage[]) => messages.filter((m) => m.sourceType === 'player').map((m) => m.text);

describe('npm run play steers the story: /select, /undo, /edit, /branch', () => {
  let covel: EmbeddedEngine;
  let client: PlayClient;
  let env: Record<string, string>;
  /** Who the log says acted: the key (`key:<id>`). */
  let by: string;

  beforeAll(async () => {
    covel = await startEmbedded();
    const { apiKey, key } = await covel.engine.tenants.create('play-steering');
    by = `key:${key.id}`;
    client = new PlayClient(covel.baseUrl, apiKey);
    env = { COVEL_URL: covel.baseUrl, COVEL_API_KEY: apiKey, COVEL_DATA_DIR: covel.dataDir };
  }, 60_000);
  afterAll(() => covel?.stop());

  /** A session in Emberback with the narrator alone (one model call a turn), continued by the player with --session. */
  const newSession = async () => (await client.createSession({ worldId: 'emberback', plugins: ['narrator'] })).id;
  const play = async (sessionId: string, lines: string[]) => {
    const run = await runPlay(['--session', sessionId], env, [...lines, '/quit']);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    for (const line of run.stdout.split('\n')) expect(displayWidth(line.replace(/^(> )+/, ''))).toBeLessThanOrEqual(WIDTH);
    return run.stdout;
  };

  it('/help lists the commands; /select lists the last turn’s alternatives, /select N puts one in the story and prints it', async () => {
    const sessionId = await newSession();
    const out = await play(sessionId, ['/help', 'Look around', '/retry', '/select', '/select 1', '/select 1', '/select 9', '/select one']);
    for (const command of ['/select <n>', '/undo', '/edit <text>', '/edit! <text>', '/branch']) expect(out).toContain(`  ${command}`);
    expect(out).not.toContain('Unknown command');

    const [turn] = (await client.messages(sessionId)).filter((m) => m.sourceType === 'player');
    const { alternatives } = await client.alternatives(sessionId, turn.turnId);
    expect(alternatives.map((a) => [a.status, a.selected])).toEqual([
      ['committed', true],
      ['committed', false],
    ]);
    // /select alone: both listed, the regeneration starred (it was in the story then)
    const listed = out.slice(out.indexOf('Alternatives of the last turn'));
    expect(listed).toMatch(/^ {2}1\. .+\n\* 2\. /m);
    // /select 1: the first alternative is in the story, and its story text was printed
    const chosen = flat(out.slice(out.indexOf('Alternative 1 of 2 is in the story now:')));
    const messages = await client.messages(sessionId);
    expect(messages.filter((m) => m.sourceType === 'player').map((m) => m.turnId)).toEqual([alternatives[0].turnId]);
    expect(chosen).toContain(flat(storyOf(messages, alternatives[0].turnId)).trim());
    expect(flat(out)).toContain('Alternative 1 is already the one in the story.');
    expect(flat(out)).toContain('There is no alternative 9: the last turn has 2.');
    expect(flat(out)).toContain('/select <n>: the number of an alternative');
  }, 120_000);

  it('/undo takes the last turn out of the story and shows where it ends now; /undo <turn id> that turn and every later one (revert route)', async () => {
    const sessionId = await newSession();
    const out = await play(sessionId, ['Walk to the river', 'Ask Mira about the ferry', '/undo', '/undo the ferry']);
    expect(flat(out)).not.toContain('needs a newer server');
    expect(flat(out)).toContain('Undone: that turn left the story (the log keeps it).');
    expect(flat(out)).toContain('/undo takes the last turn out of the story; /undo <turn id>');
    let messages = await client.messages(sessionId);
    expect(inputs(messages)).toEqual(['Walk to the river']);
    // where the story is back to: the first turn's story text, printed after the undo
    const [first] = messages.filter((m) => m.sourceType === 'player');
    expect(flat(out.slice(out.indexOf('The story is back to:')))).toContain(flat(storyOf(messages, first.turnId)).trim());
    const reverted = (await covel.engine.store.readStream(sessionId)).filter((e) => e.type === 'turn.reverted@1');
    expect(reverted.map((e) => e.data)).toEqual([expect.objectContaining({ turnIds: [expect.any(String)], by })]);

    // continued later: /undo <turn id> names the first turn; the story is back to its opening
    const again = await play(sessionId, ['Cross the bridge', `/undo ${first.turnId.toUpperCase()}`]);
    expect(flat(again)).toContain('Undone: 2 turns left the story (the log keeps them).');
    messages = await client.messages(sessionId);
    expect(inputs(messages)).toEqual([]);
    expect(flat(again.slice(again.lastIndexOf('The story is back to:')))).toContain(flat(messages[0].text).trim().slice(0, 40));
  }, 120_000);

  it('/edit shows the last input, /edit <text> changes it, /edit! <text> changes it and writes the turn again (edit route)', async () => {
    const sessionId = await newSession();
    const out = await play(sessionId, ['Walk to the river', '/edit', '/edit Walk to the old river', '/edit! Walk to the old mill']);
    expect(flat(out)).not.toContain('needs a newer server');
    expect(flat(out)).toContain('Your last input: “Walk to the river”');
    expect(flat(out)).toContain('Edited your last input. The story stays as written');
    expect(flat(out)).toContain('Edited your last input; the turn is written again:');
    const edits = (await covel.engine.store.readStream(sessionId)).filter((e) => e.type === 'message.edited@1');
    expect(edits.map((e) => [e.data.text, e.data.by])).toEqual([
      ['Walk to the old river', by],
      ['Walk to the old mill', by],
    ]);
    const messages = await client.messages(sessionId);
    expect(inputs(messages)).toEqual(['Walk to the old mill']);
    // the turn written again read the edited input, and its story text was printed
    const calls = await client.request<{ requestText: string }[]>('GET', `/v1/sessions/${sessionId}/llm-calls`);
    expect(calls.at(-1)!.requestText).toContain('Walk to the old mill');
    const [turn] = messages.filter((m) => m.sourceType === 'player');
    expect(flat(out.slice(out.indexOf('the turn is written again:')))).toContain(flat(storyOf(messages, turn.turnId)).trim());
  }, 120_000);

  it('/branch makes a session with the story so far and plays it, naming both; the first session is left as it was (branch route)', async () => {
    const sessionId = await newSession();
    const out = await play(sessionId, ['Walk to the river', '/branch', 'Ask Mira about the ferry']);
    expect(flat(out)).not.toContain('needs a newer server');
    const [turn] = (await client.messages(sessionId)).filter((m) => m.sourceType === 'player');
    const match = /Branched: session ([0-9a-f-]{36}) goes on from session ([0-9a-f-]{36}) at turn ([0-9a-f-]{36})\./.exec(flat(out));
    expect(match?.slice(2)).toEqual([sessionId, turn.turnId]);
    const branchId = match![1];
    expect(flat(out)).toContain(`/session ${sessionId} goes back to the other.`);
    expect(flat(out)).toContain(`Session ${branchId} in emberback.`);
    expect(await client.request('GET', `/v1/sessions/${branchId}`)).toMatchObject({ branchedFrom: { sessionId, atTurnId: turn.turnId } });
    // the input after /branch went to the branch; the first session has only its own turn
    expect(inputs(await client.messages(sessionId))).toEqual(['Walk to the river']);
    expect(inputs(await client.messages(branchId))).toEqual(['Walk to the river', 'Ask Mira about the ferry']);
  }, 120_000);
});
