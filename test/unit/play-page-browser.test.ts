/**
 * Issue 30 item 6 in a real browser: the inspector's Play page (`/inspector#/play`) plays a session
 * on the public API — a new session, the story streaming in, regenerate, select an alternative,
 * edit, undo, branch (and play on in the branch), stop — and the inspector marks alternatives,
 * reverted turns and branches.
 *
 * The engine runs as `npm start` runs it (a child process, plain Node, embedded: PGlite and the
 * in-process queue, its own data directory, PORT=0; the URL and dev key read from its banner), its
 * model calls going to the provider emulator through a gate that can hold a streamed reply in the
 * middle (test/support/gated-provider.ts): the page is checked while the model is still writing,
 * and Stop is pressed then, with no timing involved. Debian's `chromium` through playwright-core,
 * as in inspector-browser.test.ts. Every request the page makes must answer < 400, with no page or
 * console error and nothing outside the API; the one failure expected is the page closing a
 * session's event stream (or a long-poll) when it leaves that session (net::ERR_ABORTED).
 *
 * Each step is its own test. Regenerate, select and the alternatives' mark use routes the engine
 * has had since issue 16; edit, undo, branch and stop need the routes of issue 30 (PATCH
 * …/messages/:id, POST …/turns/:id/revert, POST …/branch, POST /v1/executions/:id/cancel, and
 * `branchedFrom`/`branches` of GET /v1/sessions/:id): each says which.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { PlayClient, type StoryMessage } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { chromiumPath, NO_PROBLEMS, type PageProblems, watchPage } from '../support/browser';
import { type GatedProvider, startGatedProvider } from '../support/gated-provider';
import { type ManagedProcess, startApp } from '../support/stack';
import { playTurns } from '../support/turns';

const ARTIFACTS = join(__dirname, '..', 'artifacts');
const executablePath = chromiumPath();
const inCi = process.env.CI === 'true' || process.env.CI === '1';
if (!executablePath && !inCi) console.warn('play page browser test SKIPPED: no `chromium` on PATH (apt-get install -y chromium)');
const describeBrowser = executablePath || inCi ? describe : describe.skip;

/** A page leaving a session closes its event stream (and a pending long-poll): the only failed requests expected. */
// reads the page still had in flight when it moved on (the stream, a long-poll, a turn's views the inspector was loading)
const closedOnLeaving = (failure: string) =>
  /\/v1\/(sessions\/[0-9a-f-]{36}\/(events|turns|turns\/[0-9a-f-]{36}\/(calls|audit))|executions\/[0-9a-f-]{36}\?waitMs=\d+): net::ERR_ABORTED$/.test(failure);
const flat = (text: string) => text.replace(/\s+/g, ' ').trim();
const storyOf = (messages: readonly StoryMessage[], turnId: string) =>
  flat(
    messages
      .filter((m) => m.turnId === turnId && m.role === 'assistant' && m.outputKind === 'story')
      .map((m) => m.text)
      .join(' '),
  );
const inputs = (messages: readonly StoryMessage[]) => messages.filter((m) => m.sourceType === 'player').map((m) => m.text);

describeBrowser('the Play page and the steering marks of the inspector (headless Chromium, engine started as `npm start`)', () => {
  let emulator: ProviderEmulator;
  let gate: GatedProvider;
  let engine: ManagedProcess;
  let baseUrl: string;
  let client: PlayClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: PageProblems;
  let dataDir: string;

  beforeAll(async () => {
    if (!executablePath) throw new Error('chromium is not installed (CI=true): .ci/run installs it with apt-get install -y chromium');
    dataDir = mkdtempSync(join(tmpdir(), 'covel-play-page-'));
    emulator = await new ProviderEmulator().start();
    gate = await startGatedProvider(emulator.url);
    engine = await startApp(
      'engine',
      'apps/main.ts',
      {
        COVEL_DATA_DIR: join(dataDir, 'data'),
        PORT: '0',
        COVEL_HOST: '127.0.0.1',
        // the embedded default (no database or queue server, no provider key); the models behind the gate
        DATABASE_URL: '',
        COVEL_MIGRATION_DATABASE_URL: '',
        REDIS_URL: '',
        COVEL_EMULATOR_URL: gate.url,
        OPENAI_API_KEY: '',
        ANTHROPIC_API_KEY: '',
        GEMINI_API_KEY: '',
      },
      /dev key:\s+\S+/,
      90_000,
    );
    baseUrl = /Covel engine ready at (\S+)/.exec(engine.output())![1];
    const devKey = /dev key:\s+(\S+)/.exec(engine.output())![1];
    client = new PlayClient(baseUrl, devKey);
    browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    page = await context.newPage();
    problems = watchPage(page, baseUrl);
    await page.goto(`${baseUrl}/inspector`);
    await page.fill('#api-key', devKey);
    await page.click('#api-key-submit');
    await page.waitForSelector('#nav-play');
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await engine?.stop();
    await gate?.close();
    await emulator?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  /** One step: its problems only (cleared first), a screenshot and what went wrong on failure. */
  async function step(name: string, steps: () => Promise<void>) {
    for (const list of Object.values(problems)) list.length = 0;
    try {
      await steps();
    } catch (error) {
      mkdirSync(ARTIFACTS, { recursive: true });
      const file = join(ARTIFACTS, `play-page-${name}.png`);
      await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
      throw new Error(
        `${(error as Error).message}\npage problems: ${JSON.stringify(problems, null, 2)}\nscreenshot: ${file}\nengine output:\n${engine.output().slice(-3000)}`,
      );
    }
    expect({ ...problems, failedRequests: problems.failedRequests.filter((f) => !closedOnLeaving(f)) }).toEqual(NO_PROBLEMS);
  }

  /** A session in Emberback with the narrator alone (one model call a turn), its turns played over HTTP. */
  async function sessionWith(texts: string[]): Promise<{ sessionId: string; turnIds: string[] }> {
    const { id } = await client.createSession({ worldId: 'emberback', plugins: ['narrator'] });
    return { sessionId: id, turnIds: await playTurns(client, id, texts, 60_000) };
  }

  /** Opens the Play page of a session (a fresh load) and waits for its story. */
  async function openPlay(sessionId: string, turns: number) {
    await page.goto('about:blank');
    await page.goto(`${baseUrl}/inspector#/play/${sessionId}`);
    await page.waitForSelector(`[data-testid="play-session"][data-session="${sessionId}"]`);
    await page.waitForSelector(`[data-testid="story-turn"][data-number="${turns}"]`);
  }

  const storyText = async (number: number) =>
    flat(
      (await page.locator(`[data-testid="story-turn"][data-number="${number}"] [data-testid="story-text"]`).allInnerTexts()).join(' ').replace(/\bEdit\b/g, ''),
    );
  /** Waits until the turn being written shows some story text (a function, not a string: the inspector's CSP forbids eval). */
  const streamedText = () =>
    page.waitForFunction(() => {
      const g = globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } };
      return (g.document.querySelector('[data-testid="live-text"]')?.textContent ?? '').trim().length > 0;
    });
  const shownInputs = async () => (await page.locator('[data-testid="player-input"] p').allInnerTexts()).map(flat);

  it('play: a new session from the Play page; the story streams in while the model writes, then it is committed', async () => {
    await step('play', async () => {
      await page.click('#nav-play');
      await page.waitForSelector('[data-testid="play-home"]');
      // the worlds are read after the page shows (the select is disabled until they are in): then emberback is chosen
      await page.waitForSelector('#play-world:not([disabled])', { state: 'attached' });
      expect(await page.locator('#play-world').inputValue()).toBe('emberback');
      await page.click('#new-session');
      await page.waitForSelector('[data-testid="play-session"]');
      const sessionId = (await page.locator('[data-testid="play-session"]').getAttribute('data-session'))!;
      expect(await client.session(sessionId)).toMatchObject({ worldId: 'emberback' });
      // the opening (turn 0) is the story's first text
      const [opening] = await client.messages(sessionId);
      await page.waitForSelector('[data-testid="story-turn"][data-number="0"] [data-testid="story-text"]');
      expect(await storyText(0)).toBe(flat(opening.text));

      const hold = gate.holdNext(6);
      await page.fill('#play-text', 'Walk to the river');
      await page.click('#send');
      await hold.reached;
      // the model is paused mid-reply: part of the story is on the page, nothing is committed
      const live = page.locator('[data-testid="live-text"]');
      await streamedText();
      const streamed = flat(await live.innerText());
      const executionId = (await page.locator('[data-testid="live-turn"]').getAttribute('data-execution'))!;
      expect((await client.execution(executionId)).status).toBe('running');
      expect(inputs(await client.messages(sessionId))).toEqual([]);
      expect(await page.locator('#send').isDisabled()).toBe(true);
      expect(await page.locator('#stop').isEnabled()).toBe(true);
      hold.release();

      await page.waitForSelector('[data-testid="story-turn"][data-number="1"] [data-testid="story-text"]');
      await page.waitForSelector('[data-testid="live-turn"]', { state: 'detached' });
      const messages = await client.messages(sessionId);
      const [turn] = messages.filter((m) => m.sourceType === 'player');
      expect(turn.text).toBe('Walk to the river');
      // what was streamed is the start of the story text committed, which the page now shows
      expect(storyOf(messages, turn.turnId).startsWith(streamed)).toBe(true);
      expect(await storyText(1)).toBe(storyOf(messages, turn.turnId));
      expect(await shownInputs()).toEqual(['Walk to the river']);
      expect(await page.locator('#stop').isDisabled()).toBe(true);
    });
  }, 120_000);

  it('regenerate writes a second alternative of the last turn; select puts the first back in the story', async () => {
    const { sessionId } = await sessionWith(['Walk to the river']);
    await step('regenerate-select', async () => {
      await openPlay(sessionId, 1);
      expect(await page.locator('[data-testid="play-alternatives"]').count()).toBe(0); // one alternative: nothing to choose
      await page.click('#regenerate');
      await page.waitForSelector('[data-testid="play-alternatives"] li[data-alternative="2"][data-selected="true"]');
      await page.waitForSelector('[data-testid="live-turn"]', { state: 'detached' });
      let [turn] = (await client.messages(sessionId)).filter((m) => m.sourceType === 'player');
      const { alternatives } = await client.alternatives(sessionId, turn.turnId);
      expect(alternatives.map((a) => [a.status, a.selected])).toEqual([
        ['committed', false],
        ['committed', true],
      ]);
      expect(await page.locator('[data-testid="play-alternatives"] li').count()).toBe(2);

      await page.click('button[aria-label="Select alternative 1"]');
      await page.waitForSelector('[data-testid="play-alternatives"] li[data-alternative="1"][data-selected="true"]');
      expect(await page.locator('[data-testid="play-notice"]').innerText()).toBe('Alternative 1 is in the story now.');
      const after = await client.alternatives(sessionId, turn.turnId);
      expect(after.alternatives.map((a) => a.selected)).toEqual([true, false]);
      const messages = await client.messages(sessionId);
      [turn] = messages.filter((m) => m.sourceType === 'player');
      expect(turn.turnId).toBe(alternatives[0].turnId);
      expect(await storyText(1)).toBe(storyOf(messages, turn.turnId));
    });
  }, 120_000);

  it('edit: a player input gets new text; "Save and write the turn again" re-runs the turn from it (PATCH …/messages/:id)', async () => {
    const { sessionId } = await sessionWith(['Walk to the river']);
    await step('edit', async () => {
      await openPlay(sessionId, 1);
      await page.click('button[aria-label="Edit your input of turn 1"]');
      await page.fill('#edit-text', 'Walk to the old river');
      await page.click('#edit-save');
      await page.waitForSelector('[data-testid="edit-form"]', { state: 'detached' });
      await page.waitForSelector('[data-testid="player-input"] p:text-is("Walk to the old river")');
      expect(inputs(await client.messages(sessionId))).toEqual(['Walk to the old river']);

      await page.click('button[aria-label="Edit your input of turn 1"]');
      await page.fill('#edit-text', 'Walk to the old mill');
      await page.click('#edit-save-regenerate');
      await page.waitForSelector('[data-testid="player-input"] p:text-is("Walk to the old mill")');
      await page.waitForSelector('[data-testid="live-turn"]', { state: 'detached' });
      const messages = await client.messages(sessionId);
      expect(inputs(messages)).toEqual(['Walk to the old mill']);
      const calls = await client.request<{ requestText: string }[]>('GET', `/v1/sessions/${sessionId}/llm-calls`);
      expect(calls.at(-1)!.requestText).toContain('Walk to the old mill');
      const [turn] = messages.filter((m) => m.sourceType === 'player');
      expect(await storyText(1)).toBe(storyOf(messages, turn.turnId));
    });
  }, 120_000);

  it('undo takes the last turn out of the story (POST …/turns/:turnId/revert)', async () => {
    const { sessionId } = await sessionWith(['Walk to the river', 'Ask Mira about the ferry']);
    await step('undo', async () => {
      await openPlay(sessionId, 2);
      await page.click('#undo');
      await page.waitForSelector('[data-testid="story-turn"][data-number="2"]', { state: 'detached' });
      expect(await page.locator('[data-testid="play-notice"]').innerText()).toBe('Undone: the last turn left the story.');
      expect(await shownInputs()).toEqual(['Walk to the river']);
      expect(inputs(await client.messages(sessionId))).toEqual(['Walk to the river']);
      // the next turn goes on from turn 1
      await page.fill('#play-text', 'Cross the bridge');
      await page.click('#send');
      await page.waitForSelector('[data-testid="story-turn"][data-number="2"] [data-testid="story-text"]');
      expect(inputs(await client.messages(sessionId))).toEqual(['Walk to the river', 'Cross the bridge']);
    });
  }, 120_000);

  it('branch: a new session with the story so far, played on in the page; the first is left as it was (POST …/branch)', async () => {
    const { sessionId, turnIds } = await sessionWith(['Walk to the river']);
    await step('branch', async () => {
      await openPlay(sessionId, 1);
      await page.click('#branch');
      await page.waitForSelector(`[data-testid="play-branched-from"][data-parent="${sessionId}"]`);
      const branchId = (await page.locator('[data-testid="play-session"]').getAttribute('data-session'))!;
      expect(branchId).not.toBe(sessionId);
      expect(page.url()).toBe(`${baseUrl}/inspector#/play/${branchId}`);
      await page.waitForSelector('[data-testid="story-turn"][data-number="1"]');
      expect(await shownInputs()).toEqual(['Walk to the river']);
      await page.fill('#play-text', 'Ask Mira about the ferry');
      await page.click('#send');
      await page.waitForSelector('[data-testid="story-turn"][data-number="2"] [data-testid="story-text"]');
      expect(inputs(await client.messages(branchId))).toEqual(['Walk to the river', 'Ask Mira about the ferry']);
      expect(inputs(await client.messages(sessionId))).toEqual(['Walk to the river']);
      expect(await client.request('GET', `/v1/sessions/${branchId}`)).toMatchObject({ branchedFrom: { sessionId, atTurnId: turnIds[0] } });
      // back in the first session, its branch is linked
      await page.click(`[data-testid="play-branched-from"] a[href="#/play/${sessionId}"]`);
      await page.waitForSelector(`[data-testid="play-branches"] a[data-branch="${branchId}"]`);
    });
  }, 120_000);

  it('stop: the turn being written is stopped, nothing of it kept; the next input commits (POST /v1/executions/:id/cancel)', async () => {
    const { sessionId } = await sessionWith([]);
    const hold = gate.holdNext(6);
    try {
      await step('stop', async () => {
        await openPlay(sessionId, 0);
        await page.fill('#play-text', 'Look around');
        await page.click('#send');
        await hold.reached;
        await streamedText();
        const executionId = (await page.locator('[data-testid="live-turn"]').getAttribute('data-execution'))!;
        await page.click('#stop');
        await page.waitForSelector('[data-testid="live-turn"]', { state: 'detached' });
        expect(await page.locator('[data-testid="play-notice"]').innerText()).toBe('Stopped: nothing of that turn was kept.');
        expect((await client.execution(executionId)).status).toBe('cancelled');
        expect(inputs(await client.messages(sessionId))).toEqual([]);
        expect(await page.locator('[data-testid="story-turn"][data-number="1"]').count()).toBe(0);
        hold.release();
        // the session takes the next input at once
        await page.fill('#play-text', 'Walk to the river');
        await page.click('#send');
        await page.waitForSelector('[data-testid="story-turn"][data-number="1"] [data-testid="story-text"]');
        expect(inputs(await client.messages(sessionId))).toEqual(['Walk to the river']);
      });
    } finally {
      hold.release();
    }
  }, 120_000);

  it('inspector: a regenerated turn shows how many alternatives it has and which one is in the story', async () => {
    const { sessionId, turnIds } = await sessionWith(['Walk to the river', 'Ask Mira about the ferry']);
    const retried = await client.retry(sessionId, turnIds[1]);
    expect(await client.waitFor(retried.executionId, 60_000)).toBe('committed');
    await step('inspector-alternatives', async () => {
      await page.goto('about:blank');
      await page.goto(`${baseUrl}/inspector#/sessions/${sessionId}`);
      await page.waitForSelector('a.turn-link');
      const mark = page.locator('tr[data-turn="2"] [data-testid="alternatives"]');
      expect(await mark.getAttribute('data-count')).toBe('2');
      expect(await mark.getAttribute('data-selected')).toBe('2');
      expect(flat(await mark.locator('[data-testid="alternatives-count"]').innerText())).toBe('2 alternatives, no. 2 in the story:');
      expect(await page.locator('tr[data-turn="1"] [data-testid="alternatives"]').count()).toBe(0);
      // the session's page leads to its Play page
      await page.click('a.play-link');
      await page.waitForSelector(`[data-testid="play-session"][data-session="${sessionId}"]`);
    });
  }, 120_000);

  it('inspector: reverted turns greyed with who reverted them and when; branches linked both ways (revert and branch routes)', async () => {
    const { sessionId, turnIds } = await sessionWith(['Walk to the river', 'Ask Mira about the ferry', 'Cross the bridge']);
    const branch = await client.branch(sessionId, turnIds[0]);
    const reverted = await client.revert(sessionId, turnIds[1]);
    expect(reverted.turnIds).toEqual([turnIds[1], turnIds[2]]);
    await step('inspector-reverted-branches', async () => {
      await page.goto('about:blank');
      await page.goto(`${baseUrl}/inspector#/sessions/${sessionId}`);
      await page.waitForSelector('a.turn-link');
      expect(await page.locator('tr[data-turn="1"]').getAttribute('data-reverted')).toBe('false');
      for (const n of [2, 3]) {
        const row = page.locator(`tr[data-turn="${n}"]`);
        expect(await row.getAttribute('data-reverted')).toBe('true');
        expect(await row.getAttribute('class')).toBe('reverted');
        expect(await row.locator('[data-testid="reverted"]').innerText()).toMatch(/^reverted by key:[0-9a-f-]{36} · \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
        // greyed
        expect(
          await row
            .locator('td')
            .first()
            .evaluate((td) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(td).color),
        ).toBe('rgb(160, 174, 192)');
      }
      // the parent lists its branch, at turn 1; the branch names its parent and the branch point
      const listed = page.locator(`[data-testid="branches"] [data-branch="${branch.sessionId}"]`);
      expect(flat(await listed.innerText())).toMatch(new RegExp(`^${branch.sessionId} at turn 1 \\(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\)$`));
      await listed.locator('a.branch-link').click();
      await page.waitForSelector(`[data-testid="branched-from"][data-parent="${sessionId}"] a.branch-point`);
      expect(flat(await page.locator('[data-testid="branched-from"]').innerText())).toBe(
        `Branch of session ${sessionId} at turn 1: its story up to there is the parent’s.`,
      );
      await page.click('[data-testid="branched-from"] a.branch-point');
      await page.waitForSelector(`[data-testid="audit-verdict"]`);
      expect(page.url()).toBe(`${baseUrl}/inspector#/sessions/${sessionId}/turns/${turnIds[0]}`);
      // a reverted turn's page says so
      await page.goto('about:blank');
      await page.goto(`${baseUrl}/inspector#/sessions/${sessionId}/turns/${turnIds[2]}`);
      await page.waitForSelector('[data-testid="reverted-banner"]');
      expect(flat(await page.locator('[data-testid="reverted-banner"]').innerText())).toMatch(
        /^Reverted: out of the story since .+ UTC, by key:[0-9a-f-]{36} \(with turn 2, the turn the undo named\)\. The log keeps it/,
      );
    });
  }, 120_000);
});
