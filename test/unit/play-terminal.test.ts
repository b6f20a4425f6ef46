import { join } from 'node:path';
import { spawn as spawnPty, type IPty } from '@lydell/node-pty';
import { PlayClient } from '../../apps/play/play-client';
import { displayWidth } from '../../apps/play/wrap';
import { ProviderEmulator } from '../../libs/emulator';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { renderScreen } from '../support/screen';
import { type GatedProvider, startGatedProvider } from '../support/gated-provider';
import { openEventStream } from '../support/sse-client';

const root = join(__dirname, '..', '..');
const COLUMNS = 60;

/** `npm run play` in a pseudo-terminal (`@lydell/node-pty`, prebuilt), against the embedded engine with the model paused mid-reply by a gate. */
describe('npm run play in a terminal', () => {
  let emulator: ProviderEmulator;
  let gate: GatedProvider;
  let covel: EmbeddedEngine;
  let term: IPty | null = null;
  let out = '';

  const screen = () => renderScreen(out);
  const waitFor = async (test: (text: string) => boolean, what: string) => {
    const deadline = Date.now() + 30_000;
    while (!test(screen())) {
      if (Date.now() > deadline) throw new Error(`never saw ${what}:\n${screen()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  beforeAll(async () => {
    emulator = await new ProviderEmulator().start();
    gate = await startGatedProvider(emulator.url);
    covel = await startEmbedded({ COVEL_EMULATOR_URL: gate.url });
  }, 60_000);

  afterAll(async () => {
    term?.kill();
    await covel?.stop();
    await gate?.close();
    await emulator?.stop();
  });

  it('streams the story before the turn ends, keeps slash commands from the model, wraps at the terminal width', async () => {
    const { apiKey } = await covel.engine.tenants.create('player');
    const player = new PlayClient(covel.baseUrl, apiKey);
    term = spawnPty(process.execPath, ['-r', './tools/register.js', 'apps/play/main.ts'], {
      cols: COLUMNS,
      rows: 40,
      cwd: root,
      env: { ...process.env, COVEL_URL: covel.baseUrl, COVEL_API_KEY: apiKey, COVEL_WORLD: 'emberback', TERM: 'xterm-256color' } as Record<string, string>,
    });
    term.onData((d) => (out += d));
    const exited = new Promise<number>((resolve) => term!.onExit(({ exitCode }) => resolve(exitCode)));
    await waitFor((s) => /Session [0-9a-f-]{36}/.test(s) && s.includes('> '), 'the first prompt');
    const sessionId = /Session ([0-9a-f-]{36})/.exec(screen())![1];
    // the world's opening (turn 0) is printed before the first prompt: who and where the player is
    const [opening] = await player.messages(sessionId);
    expect(opening).toMatchObject({ role: 'assistant', outputKind: 'story' });
    const shown = screen().replace(/\s+/g, ' ');
    expect(shown).toContain(opening.text.split(/\s+/).slice(0, 8).join(' '));
    expect(shown.indexOf(opening.text.split(/\s+/).slice(-3).join(' '))).toBeLessThan(shown.lastIndexOf('> '));

    term.write('/help\r');
    await waitFor((s) => s.includes('/session <id>'), 'the help');
    term.write('/frobnicate the dragon\r');
    await waitFor((s) => s.includes('Unknown command /frobnicate'), 'the unknown command answer');

    const stream = await openEventStream(player, sessionId);
    const hold = gate.holdNext(6);
    term.write('Look around\r');
    await hold.reached;
    const delta = await stream.until((e) => e.type === 'delta');
    const before = screen().length;
    // streamed text is on the screen while the model is still writing (it is paused): nothing is committed
    const word = String(delta.data.text).trim();
    await waitFor((s) => s.lastIndexOf(word) > s.lastIndexOf('Look around'), `the streamed word ${JSON.stringify(word)}`);
    expect((await player.messages(sessionId)).some((m) => m.role === 'assistant' && m.turnId !== opening.turnId)).toBe(false);
    hold.release();
    const committed = await stream.until((e) => e.type === 'committed');
    const story = (committed.data.messages as { role: string; outputKind: string | null; text: string }[]).find((m) => m.outputKind === 'story')!.text;
    const lastWords = story.trim().split(/\s+/).slice(-2).join(' ');
    await waitFor((s) => s.slice(before).replace(/\s+/g, ' ').includes(lastWords), 'the end of the story');
    await waitFor((s) => s.trimEnd().endsWith('>'), 'the next prompt');
    stream.close();

    // regenerate: a second alternative is written, and /alternatives lists both, the new one selected
    const beforeRetry = screen().length;
    // read before the retry: a running regeneration takes its turn's place in the history
    const turnId = (await player.messages(sessionId)).find((m) => m.role === 'user')!.turnId;
    term.write('/retry\r');
    for (let tries = 0; ; tries++) {
      const { alternatives } = await player.alternatives(sessionId, turnId);
      if (alternatives.length === 2 && alternatives.every((a) => a.status === 'committed')) break;
      if (tries > 600) throw new Error('the retry never committed');
      await new Promise((r) => setTimeout(r, 50));
    }
    await waitFor((s) => s.slice(beforeRetry).trimEnd().endsWith('>'), 'the prompt after the retried turn');
    const beforeList = screen().length;
    term.write('/alternatives\r');
    await waitFor((s) => /\* 2\. /.test(s.slice(beforeList)) && / {2}1\. /.test(s.slice(beforeList)), 'two alternatives, the second selected');
    expect(screen()).not.toContain('needs a newer server');

    term.write('/quit\r');
    expect(await exited).toBe(0);
    term = null;

    // the model never saw a slash command; every line fits the terminal
    const sent = emulator.requests.map((r) => r.raw).join('\n');
    expect(sent).toContain('Look around');
    expect(sent).not.toContain('/help');
    expect(sent).not.toContain('frobnicate');
    for (const line of screen().split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(COLUMNS);
  }, 90_000);

  it('Ctrl-C while the story is being written stops that turn and says so; the next line plays; Ctrl-C at the prompt leaves', async () => {
    const { apiKey } = await covel.engine.tenants.create('stopper');
    const player = new PlayClient(covel.baseUrl, apiKey);
    out = '';
    term = spawnPty(process.execPath, ['-r', './tools/register.js', 'apps/play/main.ts'], {
      cols: COLUMNS,
      rows: 40,
      cwd: root,
      env: { ...process.env, COVEL_URL: covel.baseUrl, COVEL_API_KEY: apiKey, COVEL_WORLD: 'emberback', TERM: 'xterm-256color' } as Record<string, string>,
    });
    term.onData((d) => (out += d));
    const exited = new Promise<number>((resolve) => term!.onExit(({ exitCode }) => resolve(exitCode)));
    await waitFor((s) => /Session [0-9a-f-]{36}/.test(s) && s.includes('> '), 'the first prompt');
    const sessionId = /Session ([0-9a-f-]{36})/.exec(screen())![1];
    const stream = await openEventStream(player, sessionId);

    const hold = gate.holdNext(4);
    term.write('Ring the bell\r');
    await hold.reached; // the model is paused in the middle of its reply: the turn runs
    const delta = await stream.until((e) => e.type === 'delta');
    const executionId = String(delta.data.executionId);
    await waitFor((s) => s.lastIndexOf(String(delta.data.text).trim()) > s.lastIndexOf('Ring the bell'), 'the streamed text');
    term.write('\x03');
    await waitFor((s) => s.includes('Stopped: this turn was cancelled'), 'the stop');
    expect((await player.execution(executionId)).status).toBe('cancelled');
    await stream.until((e) => e.type === 'cancelled' && e.data.executionId === executionId);
    hold.release();
    await waitFor((s) => s.trimEnd().endsWith('>'), 'the prompt after the stop');

    // the client is still there: the next line is played and committed
    const beforeNext = screen().length;
    term.write('Look around\r');
    const committed = await stream.until((e) => e.type === 'committed');
    expect(committed.data.executionId).not.toBe(executionId);
    await waitFor((s) => s.slice(beforeNext).trimEnd().endsWith('>'), 'the prompt after the next turn');
    expect((await player.messages(sessionId)).filter((m) => m.role === 'user').map((m) => m.text)).toEqual(['Look around']);

    // at the prompt, Ctrl-C leaves as it always did
    term.write('\x03');
    expect(await exited).toBe(0);
    term = null;
    stream.close();
  }, 90_000);
});
