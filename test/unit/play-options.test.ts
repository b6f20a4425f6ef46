import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawn as spawnPty, type IPty } from '@lydell/node-pty';
import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator, replyBookScript } from '../../libs/emulator';
import { WorldCatalog, worldReplyRules } from '../../libs/engine';
import { fixedText } from '../../libs/context';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { type GatedProvider, startGatedProvider } from '../support/gated-provider';
import { renderScreen } from '../support/screen';
import { freePort } from '../support/stack';

const root = join(__dirname, '..', '..');
const PLAY = ['-r', './tools/register.js', 'apps/play/main.ts'];
// the environment of a player with nothing set: each test says what it sets
const { COVEL_URL, COVEL_API_KEY, COVEL_WORLD, COVEL_SESSION_ID, COVEL_DATA_DIR, PORT, NO_COLOR, FORCE_COLOR, ...bare } = process.env;
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/;
const CHINESE_LANGUAGE_LINE = fixedText('zh-Hans').language('简体中文').split('\n')[1];

/** `npm run play` as a process with pipes (not a terminal): its exit code and everything it printed. */
function runPlay(args: string[], env: Record<string, string>, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...PLAY, ...args], { cwd: root, env: { ...bare, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('npm run play cannot reach the engine', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'covel-play-url-'));
    writeFileSync(join(dir, 'dev-api-key'), 'cvl_not_checked_here\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names the URL it tried, that it came from COVEL_URL, and how to change it', async () => {
    const port = await freePort(); // nothing listens there
    const { code, stdout, stderr } = await runPlay([], { COVEL_DATA_DIR: dir, COVEL_URL: `http://127.0.0.1:${port}` }, '');
    expect(code).toBe(1);
    expect(stderr).toContain(`cannot reach the Covel engine at http://127.0.0.1:${port} (from COVEL_URL): connection refused`);
    expect(stderr).toContain('Start it with npm start');
    expect(stderr).toContain('COVEL_URL=http://');
    expect(`${stdout}${stderr}`).not.toMatch(/^(TypeError: )?fetch failed/m);
  }, 30_000);

  it('names the file npm start wrote when the URL came from there', async () => {
    const port = await freePort();
    writeFileSync(join(dir, 'engine-url'), `http://127.0.0.1:${port}\n`);
    const { code, stderr } = await runPlay([], { COVEL_DATA_DIR: dir, PORT: String(port === 3000 ? 3001 : 3000) }, '');
    expect(code).toBe(1);
    expect(stderr).toContain(`at http://127.0.0.1:${port} (from ${join(dir, 'engine-url')}, written by npm start)`);
    expect(stderr).toContain('COVEL_URL');
  }, 30_000);

  it('says the default address for PORT was used when npm start wrote none', async () => {
    const port = await freePort();
    const { code, stderr } = await runPlay([], { COVEL_DATA_DIR: dir, PORT: String(port) }, '');
    expect(code).toBe(1);
    expect(stderr).toContain(`at http://127.0.0.1:${port} (the default for PORT=${port}: there is no ${join(dir, 'engine-url')}, which npm start writes)`);
  }, 30_000);

  it('refuses a COVEL_URL that is not a URL and an unknown option, with the usage', async () => {
    const bad = await runPlay([], { COVEL_DATA_DIR: dir, COVEL_URL: 'localhost 3000' }, '');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('COVEL_URL is not a URL: "localhost 3000"');
    const unknown = await runPlay(['--lang', 'fr'], { COVEL_DATA_DIR: dir }, '');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Unknown option '--lang'/);
    expect(unknown.stderr).toContain('--locale <tag>');
  }, 30_000);

  it("reads of the engine's settings only PORT and COVEL_DATA_DIR: another one set wrong does not stop it, a wrong PORT does", async () => {
    const port = await freePort();
    const others = { COVEL_LOG_LEVEL: 'loud', COVEL_BOOTSTRAP_API_KEY: 'weak', DATABASE_URL: 'not a url' };
    const unused = await runPlay([], { ...others, COVEL_DATA_DIR: dir, COVEL_URL: `http://127.0.0.1:${port}` }, '');
    expect(unused.code).toBe(1);
    expect(unused.stderr).toContain(`cannot reach the Covel engine at http://127.0.0.1:${port}`);
    expect(unused.stderr).not.toContain('bad environment');
    const badPort = await runPlay([], { COVEL_DATA_DIR: dir, PORT: 'three thousand' }, '');
    expect(badPort.code).toBe(1);
    expect(badPort.stderr).toMatch(/^bad environment: PORT: /);
  }, 30_000);

  it('loads none of the engine: no database, queue, metrics or HTTP framework package', async () => {
    // the player run with --help, then the files it loaded
    const script = [
      "process.argv.splice(1, Infinity, 'apps/play/main.ts', '--help');",
      "process.on('exit', () => process.stderr.write(JSON.stringify(Object.keys(require.cache))));",
      "require('./apps/play/main.ts');",
    ].join('\n');
    const child = spawn(process.execPath, ['-r', './tools/register.js', '-e', script], { cwd: root, env: { ...bare, COVEL_DATA_DIR: dir }, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(stdout).toContain('--locale <tag>');
    const loaded = (JSON.parse(stderr) as string[]).map((file) => relative(root, file));
    expect(loaded).toContain(join('apps', 'play', 'terminal.ts'));
    const engine = loaded.filter((file) =>
      /node_modules\/(kysely|ioredis|bullmq|prom-client|@nestjs|@electric-sql|pg)\/|^libs\/(engine|events)\/index\.ts$/.test(file),
    );
    expect(engine).toEqual([]);
  }, 30_000);
});

/** The embedded engine, its model (the emulator with the worlds' reply books) behind a gate that can pause a reply mid-stream. */
describe('npm run play against the embedded engine', () => {
  let emulator: ProviderEmulator;
  let gate: GatedProvider;
  let covel: EmbeddedEngine;
  let apiKey: string;
  let player: PlayClient;
  let term: IPty | null = null;

  beforeAll(async () => {
    // the worlds' reply books, as the embedded engine's own emulator has them: Emberback's bookkeepers do something
    const worlds = new WorldCatalog(join(root, 'worlds'));
    worlds.loadAll();
    const script = replyBookScript(await worldReplyRules(worlds));
    emulator = await new ProviderEmulator(script ? { script } : {}).start();
    gate = await startGatedProvider(emulator.url);
    covel = await startEmbedded({ COVEL_EMULATOR_URL: gate.url });
    ({ apiKey } = await covel.engine.tenants.create('player'));
    player = new PlayClient(covel.baseUrl, apiKey);
  }, 60_000);

  afterAll(async () => {
    term?.kill();
    await covel?.stop();
    await gate?.close();
    await emulator?.stop();
  }, 30_000);

  const env = () => ({ COVEL_URL: covel.baseUrl, COVEL_API_KEY: apiKey, COVEL_DATA_DIR: covel.dataDir });
  const sessionsIn = (out: string) => [...out.matchAll(/Session ([0-9a-f-]{36})/g)].map((m) => m[1]);
  const sentToModel = async (sessionId: string) => JSON.stringify(await player.request('GET', `/v1/sessions/${sessionId}/llm-calls`));

  it('--locale zh-CN: the session is in Chinese, and the model reads the Chinese framework preamble; no colour or status lines in a pipe', async () => {
    const { code, stdout, stderr } = await runPlay(['--locale', 'zh-CN', '--world', 'emberback'], env(), 'Look around\n/quit\n');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const [sessionId] = sessionsIn(stdout);
    expect(stdout).toContain(`Session ${sessionId} in emberback (zh-CN).`);
    expect(stdout).toMatch(/you look around/);
    expect(await sentToModel(sessionId)).toContain(CHINESE_LANGUAGE_LINE);
    // not a terminal: plain text, and the transient status lines are not in the transcript
    expect(stdout).not.toContain('\u001b');
    expect(stdout).not.toMatch(/waiting for a worker|being written/);
  }, 60_000);

  it('/locale <tag> starts a new session in that language; a refused tag keeps the last one', async () => {
    const { code, stdout } = await runPlay(['--world', ''], env(), '/locale\n/locale not_a tag!\nLook around\n/locale zh-CN\nLook around\n/quit\n');
    expect(code).toBe(0);
    expect(stdout).toContain("New sessions are in the engine's default language.");
    expect(stdout).toMatch(/^! POST \/v1\/sessions: 400 .*locale/m);
    const [first, second] = sessionsIn(stdout);
    expect(stdout).toContain(`Session ${first}. Type`); // --world '': no world
    expect(stdout).toContain(`Session ${second} (zh-CN).`);
    expect(await sentToModel(second)).toContain(CHINESE_LANGUAGE_LINE);
    const english = await sentToModel(first); // the refused tag left the session in English
    expect(english).toContain(fixedText('en').language('English').split('\n')[1]);
    expect(english).not.toContain(CHINESE_LANGUAGE_LINE);
  }, 60_000);

  it('--world picks the world; an unknown one is refused in words', async () => {
    const { code, stderr } = await runPlay(['--world', 'atlantis-not-installed'], env(), '/quit\n');
    expect(code).toBe(1);
    expect(stderr).toContain('There is no world "atlantis-not-installed" for you: /worlds lists the worlds you can play');
  }, 30_000);

  /** The player in a pseudo-terminal: everything it printed (raw) and what the screen shows. */
  function openTerminal(extraEnv: Record<string, string>) {
    let raw = '';
    term = spawnPty(process.execPath, PLAY, {
      cols: 70,
      rows: 50,
      cwd: root,
      env: { ...bare, ...env(), COVEL_WORLD: 'emberback', TERM: 'xterm-256color', ...extraEnv } as Record<string, string>,
    });
    term.onData((d) => (raw += d));
    const screen = () => renderScreen(raw);
    const waitFor = async (test: (text: string) => boolean, what: string) => {
      const deadline = Date.now() + 45_000;
      while (!test(screen())) {
        if (Date.now() > deadline) throw new Error(`never saw ${what}:\n${screen()}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    return { raw: () => raw, screen, waitFor, pty: term };
  }

  it('in a terminal: colour by role, status lines replaced in place, a line typed ahead echoed after the turn it waited for', async () => {
    const t = openTerminal({});
    await t.waitFor((s) => /Session [0-9a-f-]{36}/.test(s) && s.includes('> '), 'the first prompt');
    const hold = gate.holdNext(6);
    t.pty.write('Listen for the bell\r');
    await hold.reached; // the story is being written, and paused
    await t.waitFor((s) => /Listen for the bell\n\n\S/.test(s), 'the first streamed words');
    t.pty.write('Look around\r'); // typed ahead, while the turn is being written
    await new Promise((r) => setTimeout(r, 300)); // (gives the player time to read it: the old echo would be on the screen now)
    expect(t.screen()).not.toContain('Look around');
    hold.release();
    await t.waitFor((s) => /you look around/.test(s) && s.trimEnd().endsWith('>'), 'the second turn');
    const screen = t.screen();
    // the first turn's story and its bookkeeper lines, then the typed-ahead line, then its story
    const bookkeeper = screen.indexOf("· world-init: Dragon's sleep 8 → 7");
    const echoed = screen.indexOf('> Look around');
    expect(bookkeeper).toBeGreaterThan(screen.indexOf('> Listen for the bell'));
    expect(echoed).toBeGreaterThan(bookkeeper);
    expect(screen.indexOf('you look around')).toBeGreaterThan(echoed);
    // status lines were shown (raw), each erased in place: none is left on the screen
    // eslint-disable-next-line no-control-regex
    expect(t.raw()).toMatch(/\r\u001b\[2K\S*\s*\[(waiting for a worker|the story is being written)…\]/);
    expect(screen).not.toMatch(/\[(waiting for a worker|the story is being written|using [^\]]*)…\]/);
    // colour: the bookkeeper line dim, the notice yellow, the story in the terminal's own colour
    // eslint-disable-next-line no-control-regex
    expect(t.raw()).toMatch(/\u001b\[2m {2}· world-init: /);
    // eslint-disable-next-line no-control-regex
    expect(t.raw()).toMatch(/\u001b\[33mSession [0-9a-f-]{36}/);
    t.pty.write('/quit\r');
  }, 90_000);

  it('NO_COLOR (any value) turns colour off in a terminal', async () => {
    const t = openTerminal({ NO_COLOR: '1' });
    await t.waitFor((s) => /Session [0-9a-f-]{36}/.test(s) && s.includes('> '), 'the first prompt');
    t.pty.write('Listen for the bell\r');
    await t.waitFor((s) => s.includes('· world-init: ') && s.trimEnd().endsWith('>'), 'the bookkeeper line');
    expect(t.raw()).not.toMatch(SGR);
    t.pty.write('/quit\r');
  }, 90_000);
});
