import { randomBytes } from 'node:crypto';
import { chromium } from 'playwright-core';
import { chromiumPath, NO_PROBLEMS, watchPage } from '../support/browser';
import { freePort, type Stack, startStack } from '../support/stack';
import { parseExposition, samplesOf, total } from '../support/prometheus-text';

/**
 * The operator's side on PostgreSQL + BullMQ with separate processes: a worker's own `/metrics`
 * (COVEL_METRICS_PORT), the API's `/metrics` with the queue depth read from Redis, and the queue
 * dashboard (bull-board) behind the admin key.
 */
describe('metrics and the queue dashboard (PostgreSQL + BullMQ, separate processes)', () => {
  const adminKey = `cvl_admin_${randomBytes(16).toString('hex')}`;
  let stack: Stack;
  let workerMetrics: string;

  beforeAll(async () => {
    const port = await freePort();
    workerMetrics = `http://127.0.0.1:${port}/metrics`;
    stack = await startStack({
      workers: 1,
      env: { COVEL_ADMIN_API_KEY: adminKey, COVEL_QUEUE_DASHBOARD: 'on' },
      workerEnv: { COVEL_METRICS_PORT: String(port) },
    });
  }, 120_000);
  afterAll(() => stack?.stop(), 60_000);

  // the worker's listener (COVEL_METRICS_PORT) asks no key; the API's /metrics only answers the admin key
  const scrape = async (url: string) => parseExposition(await (await fetch(url, { headers: { authorization: `Bearer ${adminKey}` } })).text());
  const dashboard = (path: string, authorization?: string) =>
    fetch(`${stack.baseUrl}/admin/queues${path}`, { headers: authorization ? { authorization } : {} });

  it("a worker's /metrics counts the turns it ran; the API's reads both queues' depth from Redis", async () => {
    const { client } = stack;
    const { id } = await client.createSession({});
    for (const text of ['Look around', 'Walk to the river']) {
      const { executionId } = await client.submit(id, text);
      expect(await client.waitFor(executionId, 60_000)).toBe('committed');
    }
    // the worker records the commit; its timeline is read just after: look until it is there
    let worker = await scrape(workerMetrics);
    for (let i = 0; i < 100 && total(worker, 'covel_turn_latency_seconds_count') < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      worker = await scrape(workerMetrics);
    }
    expect(total(worker, 'covel_turns_committed_total', { kind: 'input' })).toBe(2);
    expect(total(worker, 'covel_turn_latency_seconds_count')).toBe(2);
    expect(total(worker, 'covel_model_input_tokens_total')).toBeGreaterThan(0);
    expect(total(worker, 'covel_queue_wait_seconds_count', { queue: 'covel-turns' })).toBeGreaterThanOrEqual(2);
    // a narrator-only turn runs its one runtime inline in the turn job: no runtime job waited
    expect(total(worker, 'covel_queue_wait_seconds_count', { queue: 'covel-runtimes' })).toBe(0);
    expect((await fetch(workerMetrics.replace('/metrics', '/other'))).status).toBe(404);

    const api = await scrape(`${stack.baseUrl}/metrics`);
    expect((await fetch(`${stack.baseUrl}/metrics`)).status).toBe(401); // the public port: the operator only
    // the API process ran no turn: its counters of turns are empty, the queue depth is Redis's
    expect(total(api, 'covel_turns_committed_total')).toBe(0);
    for (const queue of ['covel-turns', 'covel-runtimes'])
      expect([queue, samplesOf(api, 'covel_queue_jobs', { queue }).map((s) => s.labels.state)]).toEqual([
        queue,
        expect.arrayContaining(['waiting', 'active', 'delayed', 'waiting-children', 'failed']),
      ]);
    expect(total(api, 'covel_queue_jobs', { state: 'active' })).toBe(0);
  }, 120_000);

  it('the dashboard answers only to the admin key: none or a tenant key is a 401', async () => {
    const none = await dashboard('');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="covel-admin"/);
    expect((await dashboard('', `Bearer ${stack.apiKey}`)).status).toBe(401);
    expect((await dashboard('', `Basic ${Buffer.from(`admin:${stack.apiKey}`).toString('base64')}`)).status).toBe(401);
    expect((await dashboard('', `Bearer ${adminKey}x`)).status).toBe(401);
    expect((await dashboard('/api/queues', `Bearer ${stack.apiKey}`)).status).toBe(401);

    const page = await dashboard('', `Bearer ${adminKey}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/i);
    // what a browser sends after the login prompt
    expect((await dashboard('', `Basic ${Buffer.from(`ops:${adminKey}`).toString('base64')}`)).status).toBe(200);
    const queues = await dashboard('/api/queues', `Bearer ${adminKey}`);
    expect(queues.status).toBe(200);
    const body = (await queues.json()) as { queues: { name: string }[] };
    expect(body.queues.map((q) => q.name).sort()).toEqual(['covel-runtimes', 'covel-turns', 'covel-worlds']);
  }, 60_000);

  it('the dashboard loads nothing from another origin and sends a Content-Security-Policy (issue 31 item 7)', async () => {
    const page = await dashboard('', `Bearer ${adminKey}`);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    const html = await page.text();
    expect(html).not.toMatch(/fonts\.googleapis|(?:href|src)\s*=\s*["']?(?:https?:)?\/\//i);
    expect((await dashboard('/api/queues', `Bearer ${adminKey}`)).headers.get('content-security-policy')).toMatch(/default-src 'self'/);

    // in a browser, as an operator opens it: every request to the API, no CSP violation (a console error), nothing failing
    const executablePath = chromiumPath();
    if (!executablePath && process.env.CI !== 'true') return console.warn('queue dashboard browser check SKIPPED: no chromium on PATH');
    const browser = await chromium.launch({ executablePath: executablePath ?? undefined });
    try {
      const context = await browser.newContext({ httpCredentials: { username: 'ops', password: adminKey } });
      const tab = await context.newPage();
      const problems = watchPage(tab, stack.baseUrl);
      await tab.goto(`${stack.baseUrl}/admin/queues`);
      await tab.getByText('covel-turns').first().waitFor({ timeout: 30_000 });
      expect(problems).toEqual(NO_PROBLEMS);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
