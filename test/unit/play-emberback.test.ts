import { join } from 'node:path';
import { spawn as spawnPty, type IPty } from '@lydell/node-pty';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { renderScreen } from '../support/screen';

const root = join(__dirname, '..', '..');

/**
 * `npm run play` in Emberback on the embedded engine and its emulator (with Emberback's reply
 * book): after each story, the plugins at work — a dimension changing, a character remembered, a
 * memory kept — one line each.
 */
describe('npm run play in Emberback shows the plugins at work', () => {
  let covel: EmbeddedEngine;
  let term: IPty | null = null;
  let out = '';
  const screen = () => renderScreen(out);
  const waitFor = async (test: (text: string) => boolean, what: string) => {
    const deadline = Date.now() + 60_000;
    while (!test(screen())) {
      if (Date.now() > deadline) throw new Error(`never saw ${what}:\n${screen()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  beforeAll(async () => {
    covel = await startEmbedded();
  }, 60_000);
  afterAll(async () => {
    term?.kill();
    await covel?.stop();
  });

  it('a dimension changes, a character is created and remembered, a memory is kept: each shown after its story', async () => {
    const { apiKey } = await covel.engine.tenants.create('player');
    term = spawnPty(process.execPath, ['-r', './tools/register.js', 'apps/play/main.ts'], {
      cols: 100,
      rows: 60,
      cwd: root,
      env: { ...process.env, COVEL_URL: covel.baseUrl, COVEL_API_KEY: apiKey, COVEL_WORLD: 'emberback', TERM: 'xterm-256color' } as Record<string, string>,
    });
    term.onData((d) => (out += d));
    await waitFor((s) => /Session [0-9a-f-]{36}/.test(s) && s.includes('> '), 'the first prompt');

    const turn = async (text: string, line: RegExp, what: string) => {
      const before = screen().length;
      term!.write(`${text}\r`);
      await waitFor((s) => line.test(s.slice(before)), what);
      return screen().slice(before);
    };
    await turn('Listen for the bell', /· world-init: Dragon's sleep 8 → 7/, 'the dimension change');
    const created = await turn('Greet the salt-trader the caravan left behind', /· char-creator: .*salt-trader/i, 'the new character');
    expect(created).toMatch(/· char-creator: /);
    await turn('Leave a warm stone on the path', /· memory: .*Promised Mira/, 'the memory kept');
    // the next turn's story runtimes see it: the character is in the character sheets the narrator reads
    term.write('/quit\r');
  }, 180_000);
});
