import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlayClient } from '../../apps/play/play-client';
import { startEmbedded } from '../support/embedded';
import { type NpmStartServer, npmStart } from '../support/npm-start';
import { freePort } from '../support/stack';

const root = join(__dirname, '..', '..');

/** A plugin outside the repository whose server entry needs `zod` (it has no node_modules of its own). */
function writeZodPlugin(dir: string): void {
  mkdirSync(join(dir, 'zod-note', 'server'), { recursive: true });
  writeFileSync(
    join(dir, 'zod-note', 'PLUGIN.md'),
    '---\nid: zod-note\nname: Zod note\nversion: 0.0.1\nentry: server/index.js\ncontributes:\n  extensions:\n    - point: prompt.segment@1\n      id: zod-note\n---\nGives every runtime a note checked with zod.\n',
  );
  writeFileSync(
    join(dir, 'zod-note', 'server', 'index.js'),
    "const { note } = require('./note');\nexports.register = (api) => api.provideExtension('prompt.segment@1', 'zod-note', { handler: async (input) => [note(input.playerInput.text)] });\n",
  );
  // a nested file of the plugin resolves packages too, not only its entry
  writeFileSync(
    join(dir, 'zod-note', 'server', 'note.js'),
    "const { z } = require('zod');\nconst Text = z.string().min(1);\nexports.note = (text) => ({ id: 'zod-note', content: `Checked by zod ${z.string().parse('v4') }: ${Text.parse(text)}`, position: 'system', volatility: 'turn' });\n",
  );
}

/** Issue 28 item 17: COVEL_PLUGINS adds plugin folders to the built-ins. */
describe('COVEL_PLUGINS: plugin folders beside the built-ins', () => {
  it('a plugin in a temporary folder that requires zod loads beside the built-ins and runs in a real turn', async () => {
    const plugins = mkdtempSync(join(tmpdir(), 'covel-extra-plugins-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-extra-data-'));
    writeZodPlugin(plugins);
    const port = String(await freePort());
    const { DATABASE_URL, REDIS_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, COVEL_EMULATOR_URL, COVEL_PLUGINS_DIR, NODE_PATH, ...inherited } =
      process.env;
    let server: NpmStartServer | null = null;
    try {
      server = await npmStart({ ...inherited, COVEL_DATA_DIR: dataDir, PORT: port, COVEL_PLUGINS: plugins });
      const client = new PlayClient(`http://127.0.0.1:${port}`, readFileSync(join(dataDir, 'dev-api-key'), 'utf8').trim());
      // the built-ins are still there: the session runs the built-in narrator beside the added plugin
      const { id } = await client.createSession({ plugins: ['narrator', 'zod-note'] });
      const { executionId, turnId } = await client.submit(id, 'Ring the bell');
      expect(await client.waitFor(executionId, 60_000)).toBe('committed');
      const calls = JSON.stringify(await client.request<unknown>('GET', `/v1/sessions/${id}/turns/${turnId}/calls`));
      expect(calls).toContain('Checked by zod v4: Ring the bell');
    } finally {
      if (server) {
        process.kill(-server.child.pid!, 'SIGTERM');
        await server.exited;
      }
      rmSync(plugins, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('a plugin id found in two folders stops start-up, naming both manifests', async () => {
    const plugins = mkdtempSync(join(tmpdir(), 'covel-extra-plugins-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-extra-data-'));
    try {
      cpSync(join(root, 'plugins', 'narrator'), join(plugins, 'my-narrator'), { recursive: true });
      const start = startEmbedded({ COVEL_PLUGINS: plugins }, dataDir);
      await expect(start).rejects.toThrow(join(plugins, 'my-narrator', 'PLUGIN.md'));
      await expect(start).rejects.toThrow(join(root, 'plugins', 'narrator', 'PLUGIN.md'));
    } finally {
      rmSync(plugins, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a folder that does not exist stops start-up, naming it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-extra-data-'));
    const missing = join(dataDir, 'no-such-plugins');
    try {
      await expect(startEmbedded({ COVEL_PLUGINS: missing }, dataDir)).rejects.toThrow(`${missing}: (folder): no such plugin folder`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
