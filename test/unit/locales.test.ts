import { randomUUID } from 'node:crypto';
import { PlayClient } from '../../apps/play/play-client';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

const CHINESE_LANGUAGE_LINE = '玩家能读到的所有内容都用简体中文书写。';
const ENGLISH_LANGUAGE_LINE = 'Write everything the player can read in English.';

/** Any well-formed BCP 47 session locale (spec §6), on the embedded default. */
describe('session locales over the API', () => {
  let covel: EmbeddedEngine;
  let client: PlayClient;
  beforeAll(async () => {
    covel = await startEmbedded();
    client = await covel.newTenant('locales');
  });
  afterAll(() => covel.stop());

  const storedTag = async (sessionId: string) => {
    const [created] = await covel.engine.store.readStream(sessionId, 0, 1);
    return created.type === 'session.created@1' ? created.data.locale : null;
  };

  it.each([
    ['pt-BR', 'pt-BR'],
    ['zh-CN', 'zh-CN'],
    ['zh-SG', 'zh-SG'],
    ['zh', 'zh'],
    ['zh-hans-cn', 'zh-Hans-CN'],
    ['EN-us', 'en-US'],
    ['ar', 'ar'],
  ])('creates a session with %s and keeps its canonical tag %s', async (tag, canonical) => {
    const { id } = await client.createSession({ locale: tag });
    expect(await storedTag(id)).toBe(canonical);
  });

  it('an ill-formed tag is a 400 naming locale', async () => {
    for (const tag of ['en_US!!', '', 'i-default', 'x'.repeat(300)]) {
      await expect(client.createSession({ locale: tag })).rejects.toThrow(/400 locale: /);
    }
    await expect(client.request('POST', '/v1/sessions', { locale: 7 })).rejects.toThrow(/400 locale: /);
  });

  const firstRequest = async (sessionId: string, text: string) => {
    const { executionId, turnId } = await client.submit(sessionId, text);
    await client.waitFor(executionId, 20_000);
    const calls = await client.request<{ turnId: string; requestText: string }[]>('GET', `/v1/sessions/${sessionId}/llm-calls`);
    return { turnId, requestText: JSON.parse(calls.find((c) => c.turnId === turnId)!.requestText) as unknown };
  };

  // zh-CN and zh read the block as before; another Simplified Chinese region is named, in Chinese
  it.each([
    ['zh-CN', CHINESE_LANGUAGE_LINE],
    ['zh', CHINESE_LANGUAGE_LINE],
    ['zh-SG', '玩家能读到的所有内容都用中文（简体，新加坡，zh-SG）书写。'],
  ])('a turn in a %s session carries the Chinese fixed text (%s) and plugin body, and audits identical', async (tag, line) => {
    const { id } = await client.createSession({ locale: tag });
    const { turnId, requestText } = await firstRequest(id, '点亮灯笼');
    const sent = JSON.stringify(requestText);
    expect(sent).toContain(line);
    expect(sent).toContain('[RUNTIME]\\n你是 Covel 互动故事引擎中的运行时');
    expect(sent).toContain('你是一个互动故事的叙述者');
    expect(sent).not.toContain(ENGLISH_LANGUAGE_LINE);
    const audit = await client.request<{ identical: boolean }>('GET', `/v1/sessions/${id}/turns/${turnId}/audit`);
    expect(audit.identical).toBe(true);
  });

  /** Every model request of the turn: its runtime and the text sent. */
  const turnRequests = async (sessionId: string, turnId: string) => {
    const calls = await client.request<{ turnId: string; pluginId: string; runtimeId: string; requestText: string }[]>(
      'GET',
      `/v1/sessions/${sessionId}/llm-calls`,
    );
    return calls.filter((c) => c.turnId === turnId);
  };
  const audited = async (sessionId: string, turnId: string) =>
    (await client.request<{ identical: boolean }>('GET', `/v1/sessions/${sessionId}/turns/${turnId}/audit`)).identical;

  // spec §3: [LANGUAGE] names the session's own language; the instruction language stays English (§6)
  it.each([
    ['pt-BR', 'Write everything the player can read in Brazilian Portuguese (pt-BR).'],
    ['es-419', 'Write everything the player can read in Latin American Spanish (es-419).'],
    ['ja', 'Write everything the player can read in Japanese (ja).'],
    ['ar', 'Write everything the player can read in Arabic (ar).'],
    ['sr-Latn', 'Write everything the player can read in Serbian (Latin, sr-Latn).'],
    ['zh-Hant', 'Write everything the player can read in Traditional Chinese (zh-Hant).'],
    ['zh-TW', 'Write everything the player can read in Chinese (Traditional, Taiwan, zh-TW).'],
    ['en', ENGLISH_LANGUAGE_LINE],
  ])('a turn in a %s session says: %s (English fixed text); its audit is identical', async (tag, line) => {
    const { id } = await client.createSession({ locale: tag });
    const { turnId, requestText } = await firstRequest(id, 'acender a lanterna');
    const sent = JSON.stringify(requestText);
    expect(sent).toContain(line);
    expect(sent).toContain('[RUNTIME]\\nYou are the runtime');
    expect(sent).not.toContain(CHINESE_LANGUAGE_LINE);
    if (tag !== 'en') expect(sent).not.toContain(ENGLISH_LANGUAGE_LINE);
    expect(await audited(id, turnId)).toBe(true);
  });

  it('a pt-BR Emberback session: every request of the turn, the narrator’s included, says to write Brazilian Portuguese; the audit is identical', async () => {
    const { id } = await client.createSession({ worldId: 'emberback', locale: 'pt-BR' });
    const { executionId, turnId } = await client.submit(id, 'Olho ao redor da praça.');
    expect(await client.waitFor(executionId, 60_000)).toBe('committed');
    const requests = await turnRequests(id, turnId);
    const narrator = requests.filter((c) => c.pluginId === 'narrator' && c.runtimeId === 'narrator');
    expect(narrator.length).toBeGreaterThan(0);
    expect(requests.length).toBeGreaterThan(narrator.length); // the bookkeepers too
    for (const c of requests)
      expect([c.pluginId, c.requestText]).toEqual([
        c.pluginId,
        expect.stringContaining('Write everything the player can read in Brazilian Portuguese (pt-BR).'),
      ]);
    expect(await audited(id, turnId)).toBe(true);
  }, 90_000);

  it('a session recorded before languages were named (no languageName in session.created@1) keeps its English block, and its audit stays identical', async () => {
    // the log as the engine wrote it before: a pt-BR session's created event without the name
    const { tenant, apiKey } = await covel.engine.tenants.create('before-names');
    const before = new PlayClient(covel.baseUrl, apiKey);
    const sessionId = randomUUID();
    await covel.engine.store.append({
      tenantId: tenant.id,
      streamId: sessionId,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId, worldId: null, locale: 'pt-BR' } }],
    });
    const { executionId, turnId } = await before.submit(sessionId, 'acender a lanterna');
    expect(await before.waitFor(executionId, 20_000)).toBe('committed');
    const [call] = await before.request<{ turnId: string; requestText: string }[]>('GET', `/v1/sessions/${sessionId}/llm-calls`);
    expect(call.requestText).toContain(ENGLISH_LANGUAGE_LINE);
    expect(call.requestText).not.toContain('Brazilian Portuguese');
    expect((await before.request<{ identical: boolean }>('GET', `/v1/sessions/${sessionId}/turns/${turnId}/audit`)).identical).toBe(true);
  });

  it('a new session records the name its block uses', async () => {
    const { id } = await client.createSession({ locale: 'es-419' });
    const [created] = await covel.engine.store.readStream(id, 0, 1);
    expect(created.type === 'session.created@1' && created.data.languageName).toBe('Latin American Spanish (es-419)');
  });
});
