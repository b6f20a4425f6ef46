import { join } from 'node:path';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT } from '../../libs/engine';
import type { StoredEvent } from '../../libs/events';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

const FIXTURES = join(__dirname, '..', 'fixtures');

type Calling = Extract<StoredEvent, { type: 'llm.calling@1' }>;

describe('the plugins a session runs: enabledByDefault, the world’s list, POST /v1/sessions plugins', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: join(FIXTURES, 'session-plugins'), COVEL_WORLDS_DIR: join(FIXTURES, 'session-plugin-worlds') });
  }, 60_000);
  afterAll(() => covel.stop());

  const created = async (sessionId: string) => {
    const [first] = await covel.engine.store.readStream(sessionId, 0, 1);
    return first.type === 'session.created@1' ? first.data : null;
  };

  /** Plays one turn; the plugins whose runtimes were called, in call order; and the audit verdict. */
  async function playOne(body: Parameters<Awaited<ReturnType<EmbeddedEngine['newTenant']>>['createSession']>[0]) {
    const client = await covel.newTenant();
    const { id } = await client.createSession(body);
    const { executionId, turnId } = await client.submit(id, 'Ring the bell');
    expect(await client.waitFor(executionId, 30_000)).toBe('committed');
    const calls = (await covel.engine.store.readStream(id)).filter((e): e is Calling => e.type === 'llm.calling@1');
    const audit = await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId);
    return { id, called: calls.map((c) => c.data.pluginId), identical: audit.identical };
  }

  it('without a world list or a request list, only the plugins enabled by default run, and nothing is recorded', async () => {
    const { id, called, identical } = await playOne({});
    expect(called).toEqual(['teller']);
    expect((await created(id))?.plugins).toBeUndefined();
    expect(identical).toBe(true);
  });

  it("a world's list runs its plugins (opt-in ones too); a plugin the engine does not load is left out; the list is recorded sorted", async () => {
    const { id, called, identical } = await playOne({ worldId: 'scribed' });
    expect(called).toEqual(['scribe', 'teller', 'reader']); // pre-turn, narrative, post-turn
    expect((await created(id))?.plugins).toEqual(['reader', 'scribe', 'teller']);
    expect(identical).toBe(true);
  });

  it("the request's list overrides the world's", async () => {
    const { id, called } = await playOne({ worldId: 'scribed', plugins: ['teller', 'scribe'] });
    expect(called).toEqual(['scribe', 'teller']);
    expect((await created(id))?.plugins).toEqual(['scribe', 'teller']);
  });

  it('an unknown plugin is a 400 naming plugins.<i>; a list that does not hold together is a 400 naming plugins; nothing is created', async () => {
    const client = await covel.newTenant();
    const post = (body: unknown) =>
      fetch(`${covel.baseUrl}/v1/sessions`, {
        method: 'POST',
        headers: { ...client.authHeaders(), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const unknown = await post({ plugins: ['teller', 'ghost'] });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: 'UNKNOWN_PLUGIN', issues: [{ path: 'plugins.1', message: expect.stringContaining('"ghost"') }] });
    // the reader reads the scribe's output: without the scribe the list cannot run
    const broken = await post({ plugins: ['teller', 'reader'] });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({
      code: 'INVALID_SESSION_PLUGINS',
      issues: [{ path: 'plugins', message: expect.stringContaining('scribe/scribe') }],
    });
    // Unicode: an emoji, CJK or RTL id is simply not a loaded plugin; a NUL is refused as text
    for (const id of ['🐉', '叙述者', 'راوي', '👩\u200d👩\u200d👧']) {
      const odd = await post({ plugins: [id] });
      expect(odd.status).toBe(400);
      expect(await odd.json()).toMatchObject({ issues: [{ path: 'plugins.0' }] });
    }
    const nul = await post({ plugins: ['tel\u0000ler'] });
    expect(nul.status).toBe(400);
    expect(JSON.stringify(await nul.json())).toContain('plugins.0');
    const notArray = await post({ plugins: 'teller' });
    expect(notArray.status).toBe(400);
    expect(JSON.stringify(await notArray.json())).toContain('plugins');
    expect(await client.request<unknown[]>('GET', '/v1/sessions')).toEqual([]);
  });

  it('a manual runtime of a loaded plugin the session does not run is a 400 naming pluginId; with it in the list it runs', async () => {
    const client = await covel.newTenant();
    const activate = (sessionId: string) =>
      fetch(`${covel.baseUrl}/v1/sessions/${sessionId}/activations`, {
        method: 'POST',
        headers: { ...client.authHeaders(), 'content-type': 'application/json' },
        body: JSON.stringify({ pluginId: 'bell', runtimeId: 'bell' }),
      });
    const { id: without } = await client.createSession({});
    const refused = await activate(without);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ issues: [{ path: 'pluginId', message: 'plugin "bell" is not one this session runs' }] });
    const { id: withBell } = await client.createSession({ plugins: ['teller', 'bell'] });
    const accepted = await activate(withBell);
    expect(accepted.status).toBe(202);
    const { executionId } = (await accepted.json()) as { executionId: string };
    expect(await client.waitFor(executionId, 30_000)).toBe('committed');
  });
});
