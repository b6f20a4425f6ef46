import { join } from 'node:path';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT, rebuildRequests } from '../../libs/engine';
import type { StoredEvent } from '../../libs/events';
import { seenExports } from '../fixtures/exports-plugins/tracker/server';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';
import { dataBlock, messageTexts } from '../support/request-blocks';

const PLUGINS = join(__dirname, '..', 'fixtures', 'exports-plugins');

type Calling = Extract<StoredEvent, { type: 'llm.calling@1' }>;

const exportsBlock = (body: string) => dataBlock(body, 'runtime-exports');

describe('runtime exports through real turns (io.exports, <runtime-exports>)', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS });
  }, 60_000);
  afterAll(() => covel?.stop());

  const events = (sessionId: string) => covel.engine.store.readStream(sessionId);
  const calls = async (sessionId: string, executionId: string, pluginId: string, runtimeId = pluginId) =>
    (await events(sessionId)).filter(
      (e): e is Calling => e.type === 'llm.calling@1' && e.data.executionId === executionId && e.data.pluginId === pluginId && e.data.runtimeId === runtimeId,
    );
  /** The message id of the tracker's result in an execution (the export's resultId). */
  const trackerResult = async (sessionId: string, executionId: string) => {
    const produced = (await events(sessionId)).find(
      (e) => e.type === 'runtime.output.produced@1' && e.data.executionId === executionId && e.data.pluginId === 'tracker',
    );
    return (produced!.data as { messageId: string }).messageId;
  };

  it("a bookkeeper after the narrative exports to the next turn's story runtime, a pre-turn runtime to this turn's; audience, provenance, data boundary; replay identical", async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession();
    const scene = { value: { place: 'the mill', date: 'the third day of spring' }, source: { pluginId: 'scout', runtimeId: 'scout' } };

    // turn 1: the scout's export of this execution (an earlier stage); the tracker has no result yet
    const first = await client.submit(id, 'Walk to the mill');
    expect(await client.waitFor(first.executionId, 30_000)).toBe('committed');
    const [narrator1] = await calls(id, first.executionId, 'narrator');
    // the whole value through the data boundary: the UUID, the ISO time and sessionId are gone, the story date stays
    expect(exportsBlock(narrator1.data.body)).toEqual({ scene });
    // audience self: the tracker's own agent runtime sees `tally` from the tracker's output of this turn (an earlier stage), nothing else
    const [review1] = await calls(id, first.executionId, 'tracker', 'review');
    expect(exportsBlock(review1.data.body)).toEqual({ tally: { value: 1, source: { pluginId: 'tracker', runtimeId: 'tracker' } } });
    // its tool reads the same exports with the result's id (spec §4: resultId is for tools and the kernel)
    expect(seenExports).toEqual([
      [{ name: 'tally', value: 1, source: { pluginId: 'tracker', runtimeId: 'tracker', resultId: await trackerResult(id, first.executionId) } }],
    ]);
    // not in any audience: the scout's own request has no block
    const [scout1] = await calls(id, first.executionId, 'scout');
    expect(exportsBlock(scout1.data.body)).toBeUndefined();

    // turn 2: the tracker's committed result of turn 1 reaches the narrator; the pointer that finds nothing is left out
    const second = await client.submit(id, 'Knock on the door');
    expect(await client.waitFor(second.executionId, 30_000)).toBe('committed');
    const [narrator2] = await calls(id, second.executionId, 'narrator');
    const threads1 = { value: ['the thread of turn 1'], source: { pluginId: 'tracker', runtimeId: 'tracker' } };
    expect(exportsBlock(narrator2.data.body)).toEqual({ scene, threads: threads1 });
    expect(Object.keys(exportsBlock(narrator2.data.body) as object)).toEqual(['scene', 'threads']); // by plugin id, then as declared
    // provenance is pluginId and runtimeId only: the result's message id stays with the kernel
    const result1 = await trackerResult(id, first.executionId);
    expect(narrator2.data.body).not.toContain(result1);
    expect(narrator2.data.body).not.toContain('resultId');
    // in the turn context (after the history, before the player's input), never in the system prompt: the prefix holds
    const texts = messageTexts(narrator2.data.body);
    const at = texts.findIndex((t) => t.includes('<runtime-exports>'));
    expect(at).toBeGreaterThan(texts.findIndex((t) => t.includes('Walk to the mill')));
    expect(at).toBeLessThan(texts.findIndex((t) => t.includes('Knock on the door')));
    const system = (body: string) => (JSON.parse(body) as { messages: { role: string; content: unknown }[] }).messages[0];
    expect(system(narrator2.data.body).role).toBe('system');
    expect(JSON.stringify(system(narrator2.data.body))).not.toContain('runtime-exports');
    expect(system(narrator2.data.body)).toEqual(system(narrator1.data.body));
    // the review reads this turn's tally, not the one committed before
    const [review2] = await calls(id, second.executionId, 'tracker', 'review');
    expect(exportsBlock(review2.data.body)).toEqual({ tally: { value: 2, source: { pluginId: 'tracker', runtimeId: 'tracker' } } });

    // a regenerated turn 2 reads the history without the turn it re-runs: the export is turn 1's again
    const retried = await client.retry(id, second.turnId);
    expect(await client.waitFor(retried.executionId, 30_000)).toBe('committed');
    const [narrator3] = await calls(id, retried.executionId, 'narrator');
    expect(exportsBlock(narrator3.data.body)).toEqual({ scene, threads: threads1 });

    // replay rebuilds every request byte for byte; the audit names the export's source result
    const log = await events(id);
    const rebuilt = await rebuildRequests(log, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
      historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
    });
    expect(rebuilt.length).toBe(log.filter((e) => e.type === 'llm.calling@1').length);
    expect(rebuilt.filter((r) => !r.identical)).toEqual([]);
    const narratorRebuilt = rebuilt.find((r) => r.callId === narrator2.data.callId)!;
    expect(narratorRebuilt.sources.find((s) => s.section === 'turn-context')!.items).toContain(`export threads: tracker/tracker result ${result1}`);
    const audit = await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, second.turnId);
    expect(audit.identical).toBe(true);
  }, 90_000);
});
