/**
 * The inspector's worlds (issue 29 item 5) in a real browser, against the engine as a user starts it
 * (a child process running what `npm start` runs, its own data directory, PORT=0; the URL and dev
 * key read from its banner), as in inspector-browser.test.ts: the tenant's worlds, built-in and its
 * own (archived ones too, every page of the list), each with its revision, and the revision of its
 * world each session runs (the one it started on, or the last it was moved to). Every request the
 * page makes must answer < 400, with no page or console error and nothing loaded from elsewhere.
 *
 * Skips only when chromium is missing outside CI (`CHROMIUM_PATH` names another binary).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { PlayClient } from '../../apps/play/play-client';
import { chromiumPath, NO_PROBLEMS, type PageProblems, watchPage } from '../support/browser';
import { type ManagedProcess, startApp } from '../support/stack';

const ARTIFACTS = join(__dirname, '..', 'artifacts');
/** `COVEL_INSPECTOR_SCREENSHOTS=<dir>`: writes the sessions list and the worlds list there (docs/images/inspector-worlds*.png). */
const SCREENSHOTS = process.env.COVEL_INSPECTOR_SCREENSHOTS ?? null;
const executablePath = chromiumPath();
const inCi = process.env.CI === 'true' || process.env.CI === '1';
if (!executablePath && !inCi) console.warn('inspector worlds browser test SKIPPED: no `chromium` on PATH (apt-get install -y chromium)');
const describeBrowser = executablePath || inCi ? describe : describe.skip;

/** More worlds than one page of the inspector's list (100): it reads them all by the cursor. */
const FILLER_WORLDS = 100;

const world = (name: string) => ({
  name,
  description: 'A lighthouse on a reef.',
  lore: 'The keeper writes down every ship that passes, even the ones that are not there.',
  characters: [{ id: 'keeper', name: 'Ysolde', type: 'npc', description: 'The keeper, who speaks to the lamp.' }],
  plugins: ['narrator'],
});

describeBrowser('inspector: the worlds of the tenant and the revision each session runs (headless Chromium, engine started as `npm start`)', () => {
  let engine: ManagedProcess;
  let baseUrl: string;
  let devKey: string;
  let browser: Browser;
  let dataDir: string;

  beforeAll(async () => {
    if (!executablePath) throw new Error('chromium is not installed (CI=true): .ci/run installs it with apt-get install -y chromium');
    dataDir = mkdtempSync(join(tmpdir(), 'covel-inspector-worlds-'));
    engine = await startApp(
      'engine',
      'apps/main.ts',
      {
        COVEL_DATA_DIR: join(dataDir, 'data'),
        PORT: '0',
        COVEL_HOST: '127.0.0.1',
        // the embedded default, as on a fresh clone: no database or queue server, no provider key
        DATABASE_URL: '',
        COVEL_MIGRATION_DATABASE_URL: '',
        REDIS_URL: '',
        COVEL_EMULATOR_URL: '',
        OPENAI_API_KEY: '',
        ANTHROPIC_API_KEY: '',
        GEMINI_API_KEY: '',
      },
      /dev key:\s+\S+/,
      90_000,
    );
    baseUrl = /Covel engine ready at (\S+)/.exec(engine.output())![1];
    devKey = /dev key:\s+(\S+)/.exec(engine.output())![1];
    browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await engine?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  async function withScreenshot(page: Page, name: string, problems: PageProblems, steps: () => Promise<void>) {
    try {
      await steps();
    } catch (error) {
      mkdirSync(ARTIFACTS, { recursive: true });
      const file = join(ARTIFACTS, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
      throw new Error(
        `${(error as Error).message}\npage problems: ${JSON.stringify(problems, null, 2)}\nscreenshot: ${file}\nengine output:\n${engine.output().slice(-3000)}`,
      );
    }
  }

  it('lists every world with its revision and archived state; each session shows its world and the revision it runs', async () => {
    const client = new PlayClient(baseUrl, devKey);
    const send = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...client.authHeaders(), 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      expect(res.status).toBeLessThan(300);
      return (await res.json()) as { id: string; revision: number };
    };
    const name = 'Saltmarrow Light 灯塔 ورن 🌊';
    const { id: lighthouse } = await send('POST', '/v1/worlds', world(name));
    const { id: onFirst } = await client.createSession({ worldId: lighthouse });
    const { id: moved } = await client.createSession({ worldId: lighthouse });
    expect((await send('PUT', `/v1/worlds/${lighthouse}`, { ...world(name), lore: 'The lamp has gone dark.' }, { 'if-match': '"1"' })).revision).toBe(2);
    await send('POST', `/v1/sessions/${moved}/world-revision`, {});
    const { id: onSecond } = await client.createSession({ worldId: lighthouse });
    const { id: builtIn } = await client.createSession({ worldId: 'emberback' });
    const { id: archived } = await send('POST', '/v1/worlds', world('Archive of Tides 潮 📚'));
    const gone = await fetch(`${baseUrl}/v1/worlds/${archived}`, { method: 'DELETE', headers: client.authHeaders() });
    expect(gone.status).toBe(200);
    for (let i = 1; i <= FILLER_WORLDS; i++) await send('POST', '/v1/worlds', world(`Filler ${i}`));

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watchPage(page, baseUrl);
    await withScreenshot(page, 'inspector-worlds', problems, async () => {
      await page.goto(`${baseUrl}/inspector`);
      await page.fill('#api-key', devKey);
      await page.click('#api-key-submit');

      // the sessions list: each session's world by name, and the revision it runs
      const worldOf = (session: string) => page.locator(`tr[data-session="${session}"] [data-testid="session-world"]`);
      await page.waitForSelector(`tr[data-session="${onFirst}"] [data-testid="session-world"]:has-text("Saltmarrow")`);
      expect(await worldOf(onFirst).innerText()).toBe(`${name} · rev 1`);
      expect(await worldOf(moved).innerText()).toBe(`${name} · rev 2`);
      expect(await worldOf(onSecond).innerText()).toBe(`${name} · rev 2`);
      expect(await worldOf(onSecond).getAttribute('title')).toBe(lighthouse);
      expect(await worldOf(builtIn).innerText()).toBe('Emberback · built-in');
      expect(await worldOf(builtIn).getAttribute('data-revision')).toBe('');
      if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'inspector-sessions-worlds.png') });

      // the worlds: built-in first, then the tenant's, archived ones too, all pages
      await page.click('#nav-worlds');
      await page.waitForSelector('table.worlds');
      const rows = page.locator('table.worlds tbody tr');
      expect(await rows.count()).toBe(1 + 2 + FILLER_WORLDS);
      expect(await rows.first().getAttribute('data-world')).toBe('emberback');
      const row = (id: string) => page.locator(`table.worlds tr[data-world="${id}"]`);
      expect(await row('emberback').getAttribute('data-built-in')).toBe('true');
      expect(await row('emberback').locator('[data-testid="world-revision"]').innerText()).toBe('1');
      expect(await row(lighthouse).locator('.world-name').innerText()).toBe(name);
      expect(await row(lighthouse).locator('[data-testid="world-revision"]').innerText()).toBe('2');
      expect(await row(lighthouse).locator('[data-testid="world-state"]').innerText()).toBe('active');
      expect(await row(archived).locator('.world-name').innerText()).toBe('Archive of Tides 潮 📚');
      expect(await row(archived).locator('[data-testid="world-state"]').innerText()).toBe('archived');
      expect(await page.locator('#app').innerText()).not.toMatch(/Loading…|NaN|undefined|null/);
      if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'inspector-worlds.png') });

      // a session's page: its world, the revision it runs, and that the world has moved on since
      await page.click('#nav-sessions');
      await page.click(`a.session-link[href$="${onFirst}"]`);
      const line = page.locator('[data-testid="session-world-line"]');
      await page.waitForSelector('[data-testid="session-world-line"]:has-text("Saltmarrow")');
      expect(await line.innerText()).toBe(
        `World: ${name} ${lighthouse} · revision 1; the world is at revision 2 now (POST /v1/sessions/${onFirst}/world-revision moves the session)`,
      );
      await page.goto(`${baseUrl}/inspector#/sessions/${onSecond}`);
      await page.waitForSelector(`[data-testid="session-world-line"][data-revision="2"]:has-text("Saltmarrow")`);
      expect(await line.innerText()).toBe(`World: ${name} ${lighthouse} · revision 2, its current one`);
      if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'inspector-session-world.png') });
      await page.goto(`${baseUrl}/inspector#/sessions/${builtIn}`);
      await page.waitForSelector('[data-testid="session-world-line"]:has-text("Emberback")');
      expect(await line.innerText()).toBe('World: Emberback emberback · a built-in world (one revision)');
    });
    expect({ ...problems }).toEqual(NO_PROBLEMS);
    await context.close();
  }, 240_000);
});
