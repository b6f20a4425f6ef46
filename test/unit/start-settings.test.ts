import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { describeModels } from '../../apps/banner';
import { freePort, startApp } from '../support/stack';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);
const slots = [
  { name: 'story', protocol: 'openai-chat' as const },
  { name: 'fast', protocol: 'anthropic' as const },
];

/** Issue 8 items 7 and 10: what `npm start` says about models, where it binds, which keys it takes. */
describe('start-up banner and settings', () => {
  it('names the emulator in use, and a real endpoint only where a provider key is set', () => {
    expect(describeModels(slots, {}, 'http://127.0.0.1:4000')).toBe('offline provider emulator (http://127.0.0.1:4000)');
    expect(describeModels(slots, { COVEL_EMULATOR_URL: 'http://emu:8080' }, null)).toBe('shared provider emulator (http://emu:8080)');
    expect(describeModels(slots, { COVEL_EMULATOR_URL: 'http://emu:8080', OPENAI_API_KEY: 'sk-x', ANTHROPIC_API_KEY: 'sk-y' }, null)).toBe(
      'story: real openai-chat endpoint; fast: real anthropic endpoint',
    );
    expect(describeModels(slots, { COVEL_EMULATOR_URL: 'http://emu:8080', OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'https://relay.example/v1' }, null)).toBe(
      'story: real openai-chat endpoint (https://relay.example/v1); fast: shared provider emulator (http://emu:8080)',
    );
  });

  it('npm start with COVEL_EMULATOR_URL says "shared provider emulator" and binds to loopback by default', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-banner-'));
    const port = await freePort();
    const env = { DATABASE_URL: '', REDIS_URL: '', COVEL_HOST: '', COVEL_DATA_DIR: dataDir, PORT: String(port), COVEL_EMULATOR_URL: 'http://127.0.0.1:9' };
    const app = await startApp('npm start', 'apps/main.ts', env, /Play in another terminal/);
    try {
      expect(app.output()).toContain('model:    shared provider emulator (http://127.0.0.1:9)');
      expect(app.output()).not.toContain('real provider endpoint');
      expect(app.output()).toContain(`bound to: 127.0.0.1:${port}`);
    } finally {
      await app.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses a weak COVEL_BOOTSTRAP_API_KEY at start-up, naming the variable', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-weak-key-'));
    const env = { ...process.env, DATABASE_URL: '', REDIS_URL: '', COVEL_DATA_DIR: dataDir, PORT: '0', COVEL_BOOTSTRAP_API_KEY: 'x' };
    try {
      // (a start that wrongly succeeds is ended by the timeout, and fails the match)
      await expect(run(process.execPath, ['-r', './tools/register.js', 'apps/main.ts'], { cwd: root, env, timeout: 30_000 })).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('bad environment: COVEL_BOOTSTRAP_API_KEY: must be at least 32 characters'),
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('docker-compose requires the bootstrap key, publishes on loopback, listens on all interfaces inside', () => {
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: { api: { environment: Record<string, string>; ports: string[] } };
    };
    const { environment, ports } = compose.services.api;
    expect(environment.COVEL_BOOTSTRAP_API_KEY).toMatch(/^\$\{COVEL_BOOTSTRAP_API_KEY:\?[^}]+\}$/);
    expect(ports).toEqual(['${COVEL_PUBLISH_ADDRESS:-127.0.0.1}:3000:3000']);
    expect(environment.COVEL_HOST).toBe('0.0.0.0');
  });
});
