import type { PlayClient } from '../../apps/play/play-client';
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

  it.each(['zh-CN', 'zh-SG', 'zh'])('a turn in a %s session carries the Chinese fixed text and plugin body, and audits identical', async (tag) => {
    const { id } = await client.createSession({ locale: tag });
    const { turnId, requestText } = await firstRequest(id, '点亮灯笼');
    const sent = JSON.stringify(requestText);
    expect(sent).toContain(CHINESE_LANGUAGE_LINE);
    expect(sent).toContain('你是一个互动故事的叙述者');
    expect(sent).not.toContain(ENGLISH_LANGUAGE_LINE);
    const audit = await client.request<{ identical: boolean }>('GET', `/v1/sessions/${id}/turns/${turnId}/audit`);
    expect(audit.identical).toBe(true);
  });

  it.each(['pt-BR', 'zh-TW', 'zh-Hant'])('a turn in a %s session carries the English fixed text', async (tag) => {
    const { id } = await client.createSession({ locale: tag });
    const sent = JSON.stringify((await firstRequest(id, 'acender a lanterna')).requestText);
    expect(sent).toContain(ENGLISH_LANGUAGE_LINE);
    expect(sent).not.toContain(CHINESE_LANGUAGE_LINE);
  });
});
