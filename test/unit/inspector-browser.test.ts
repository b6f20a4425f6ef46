/**
 * The web prompt inspector in a real browser: Debian's `chromium`, driven by playwright-core with its
 * executable path (no browser download). A session of a few Emberback turns on the emulator, with
 * the story slot on the Anthropic protocol so the adapter's cache_control breakpoints are on the wire.
 * Skips only when chromium is missing outside CI; in CI (`CI=true`, .ci/run installs it) it runs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { PlayClient } from '../../apps/play/play-client';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

const ARTIFACTS = join(__dirname, '..', 'artifacts');

function chromiumPath(): string | null {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

const executablePath = chromiumPath();
const inCi = process.env.CI === 'true' || process.env.CI === '1';
if (!executablePath && !inCi)
  console.warn('inspector browser test SKIPPED: no `chromium` on PATH (apt-get install -y chromium); in CI it runs and fails without it');
const describeBrowser = executablePath || inCi ? describe : describe.skip;

const ANTHROPIC_SLOTS = `
[slots.story]
protocol = "anthropic"
model = "claude-sonnet-4-5"
contextWindow = 200000
maxOutputTokens = 1024

[slots.fast]
protocol = "openai-chat"
model = "gpt-4.1-nano"
contextWindow = 128000
maxOutputTokens = 512
`;

describeBrowser('web prompt inspector (headless Chromium)', () => {
  let covel: EmbeddedEngine;
  let browser: Browser;
  let configDir: string;

  beforeAll(async () => {
    if (!executablePath) throw new Error('chromium is not installed (CI=true): .ci/run installs it with apt-get install -y chromium');
    configDir = mkdtempSync(join(tmpdir(), 'covel-inspector-'));
    writeFileSync(join(configDir, 'llm.toml'), ANTHROPIC_SLOTS);
    covel = await startEmbedded({ COVEL_LLM_CONFIG: join(configDir, 'llm.toml') });
    browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await covel?.stop();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  /** Runs the steps; on failure writes a screenshot under test/artifacts/ and rethrows. */
  async function withScreenshot(page: Page, name: string, steps: () => Promise<void>) {
    try {
      await steps();
    } catch (error) {
      mkdirSync(ARTIFACTS, { recursive: true });
      const file = join(ARTIFACTS, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
      throw new Error(`${(error as Error).message}\nscreenshot: ${file}`);
    }
  }

  it('key entered once; sessions → turns (chart) → a turn: sections with sources, cache boundaries, messages by section, first difference, audit verdict', async () => {
    const { apiKey } = await covel.engine.tenants.create('inspector');
    const client = new PlayClient(covel.baseUrl, apiKey);
    const { id: sessionId } = await client.createSession({ worldId: 'emberback' });
    const turnIds: string[] = [];
    for (const text of ['Walk to the river', 'Ask Mira about the ferry', 'Watch the vents']) {
      const r = await client.submit(sessionId, text);
      expect(await client.waitFor(r.executionId, 30_000)).toBe('committed');
      turnIds.push(r.turnId);
    }

    const context = await browser.newContext();
    const page = await context.newPage();
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(covel.baseUrl) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

    await withScreenshot(page, 'inspector-navigation', async () => {
      await page.goto(`${covel.baseUrl}/inspector`);
      await page.fill('#api-key', apiKey);
      await page.click('#api-key-submit');

      // sessions of the tenant
      await page.click(`a.session-link[href$="${sessionId}"]`);
      // turns, and the per-session chart (uPlot draws on a canvas)
      await page.waitForSelector('#turn-chart canvas');
      expect(await page.locator('a.turn-link').count()).toBe(3);
      expect(await page.locator('#turn-chart .u-legend').innerText()).toMatch(/cache-read share/);

      // the key was entered once: a reload keeps it (sessionStorage)
      await page.reload();
      await page.waitForSelector('a.turn-link');
      expect(await page.evaluate("sessionStorage.getItem('covel.inspector.apiKey')")).toBe(apiKey);

      await page.click('a.turn-link[data-turn="3"]');
      await page.waitForSelector('[data-testid="audit-verdict"][data-identical="true"]', { timeout: 60_000 });
      expect(await page.locator('[data-testid="audit-verdict"]').innerText()).toMatch(/byte-identical/);
      await page.waitForSelector('[data-testid="call"]');

      // the system prompt split into its sections, each with its recorded source
      const sections = await page.locator('[data-testid="section"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-section')));
      expect(sections).toEqual(expect.arrayContaining(['preamble', 'runtime-body', 'segments', 'worldinfo-before']));
      const segments = page.locator('[data-testid="section"][data-section="segments"]').first();
      expect(await segments.innerText()).toMatch(/narrator\/narrative-style/);
      const lore = page.locator('[data-testid="section"][data-section="worldinfo-before"]').first();
      expect(await lore.innerText()).toMatch(/world-lore: constant/);

      // cache boundaries where the Anthropic adapter put them (cache_control on the wire)
      const boundaries = page.locator('[data-testid="call"]').first().locator('[data-testid="cache-boundary"][data-kind="cache_control"]');
      expect(await boundaries.count()).toBeGreaterThanOrEqual(2);
      expect(await boundaries.first().innerText()).toMatch(/cache boundary/);

      // each message labelled by its section
      const messageSections = await page.locator('[data-testid="message-section"]').allInnerTexts();
      expect(messageSections).toEqual(expect.arrayContaining(['history', 'player-input']));

      // the first difference from the previous turn's request, in the history (the new turn's messages)
      const first = page.locator('[data-testid="call"]').first();
      await expect(first.locator('[data-testid="first-difference"]').count()).resolves.toBe(1);
      expect(await first.locator('.diff-summary').innerText()).toMatch(/\[history\]/);
      expect(await first.locator('span.shared').count()).toBeGreaterThan(0);

      // estimated shared prefix vs the provider's cached tokens
      expect(await first.locator('[data-testid="shared-estimate"]').innerText()).toMatch(/^\d+ tokens/);
      // (the emulator, like Anthropic, caches nothing under 1024 tokens: these short requests read 0)
      expect(await first.locator('[data-testid="provider-cached"]').innerText()).toMatch(/^\d+$/);
      expect(await page.locator('#app').innerText()).not.toMatch(/Loading…/);
    });
    expect(pageErrors).toEqual([]);
    expect(outside).toEqual([]);

    // a wrong key: the page says so and asks again
    const other = await context.newPage();
    await withScreenshot(other, 'inspector-bad-key', async () => {
      // a new tab has its own session storage: the key is asked for
      await other.goto(`${covel.baseUrl}/inspector`);
      await other.fill('#api-key', 'cvl_not-a-key');
      const answer = other.waitForResponse((r) => r.url().endsWith('/v1/sessions'));
      await other.click('#api-key-submit');
      expect((await answer).status()).toBe(401);
      await other.waitForSelector('#api-key');
      expect(await other.evaluate("sessionStorage.getItem('covel.inspector.apiKey')")).toBeNull();
    });
    await context.close();
  }, 180_000);
});
