import { join } from 'node:path';
import type { StoredEvent } from '../../libs/events';
import { isWellFormedText } from '../../libs/text';
import { eventually } from '../../libs/engine/turn/test/harness';
import { behaviour, type SabotageMode, THROWN } from '../fixtures/hostile-stage-plugins/saboteur/server';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { auditedIdentical } from '../support/turns';

const HANDLER_TIMEOUT_MS = 3_000;

const outputsOf = (events: StoredEvent[]) =>
  events.filter((e) => e.type === 'runtime.output.produced@1').map((e) => e.data as { pluginId: string; runtimeId: string; text?: string });

/**
 * One hostile runtime among the siblings of an inline post-turn stage (issue 33: a stage's runtimes
 * run at once in the turn job, `runStage`). The fixture's post-turn stage holds a model runtime
 * (chronicler), a function runtime (counter) and a hostile function runtime (saboteur) that waits
 * until its siblings recorded their outputs, then throws a value that is no Error, returns no
 * JSON, returns too much, or never settles. The documented policy (PLUGIN-API: a handler that
 * throws, times out or returns what its schema refuses fails that runtime's execution, permanently):
 * the siblings' outputs stand, recorded once each; the execution fails once, its event and the
 * player's message naming the plugin and runtime (in text the log can hold); nothing commits, the
 * turn is not run again, the audit rebuilds its requests byte for byte, and the session's next
 * turn runs every plugin, the saboteur included.
 */
describe('a hostile sibling in an inline post-turn stage (embedded engine)', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded({
      COVEL_PLUGINS_DIR: join(__dirname, '..', 'fixtures', 'hostile-stage-plugins'),
      COVEL_PLUGIN_HANDLER_TIMEOUT_MS: String(HANDLER_TIMEOUT_MS),
    });
  }, 60_000);
  afterAll(() => covel.stop());
  afterEach(() => {
    behaviour.mode = 'ok';
    behaviour.gate = Promise.resolve();
  });

  it.each([
    ['throw-value', 'PLUGIN_FUNCTION_THREW', `threw: ${THROWN.replace('\u0000', '\uFFFD').replace('\uD800', '\uFFFD')}`],
    ['not-json', 'PLUGIN_FUNCTION_RESULT_INVALID', 'returned a value that is not JSON: (root): Invalid input'],
    ['oversized', 'PLUGIN_FUNCTION_RESULT_INVALID', 'returned more than 4194304 bytes of JSON'],
    ['hang', 'PLUGIN_FUNCTION_TIMEOUT', `did not answer within ${HANDLER_TIMEOUT_MS} ms`],
  ] as [SabotageMode, string, string][])(
    '%s: the siblings’ outputs are recorded once, the saboteur fails the execution alone and visibly, the audit is identical',
    async (mode, code, detail) => {
      let open!: () => void;
      behaviour.mode = mode;
      behaviour.gate = new Promise<void>((resolve) => (open = resolve));
      const client = await covel.newTenant();
      const { id } = await client.createSession({});
      const { executionId, turnId } = await client.submit(id, 'Cross the river 🚣 渡河 اعبر');
      const read = () => covel.engine.store.readStream(id);
      await eventually(async () => {
        const runtimes = outputsOf(await read()).map((o) => o.runtimeId);
        return runtimes.includes('chronicle') && runtimes.includes('count');
      }, 'the siblings recorded their outputs');
      open();
      const message = await client.waitFor(executionId, 20_000).then(
        (status) => `ended ${status}`,
        (error: Error) => error.message,
      );
      const prefix = `plugin saboteur: function runtime "sabotage" ${detail}`;
      expect(message).toBe(`turn failed: ${prefix}`);
      const events = await read();
      const failed = events.filter((e) => e.type === 'execution.failed@1').map((e) => (e.data as { error: { code: string; message: string } }).error);
      expect(failed).toEqual([{ code, message: expect.stringContaining(prefix) }]);
      expect(isWellFormedText(failed[0].message) && !failed[0].message.includes('\u0000')).toBe(true);
      // the siblings' outputs stand, once each; the saboteur recorded none; nothing committed
      const outputs = outputsOf(events);
      expect(outputs.map((o) => `${o.pluginId}/${o.runtimeId}`).sort()).toEqual(['chronicler/chronicle', 'counter/count', 'narrator/narrator']);
      expect(JSON.parse(outputs.find((o) => o.runtimeId === 'count')!.text!)).toEqual({ turn: 1, note: '计数 👩‍👩‍👧 عدد' });
      expect(events.map((e) => e.type)).not.toContain('turn.committed@1');
      expect(events.filter((e) => e.type === 'execution.started@1')).toHaveLength(1);
      expect(await auditedIdentical(covel.engine, id, [turnId])).toEqual([true]);

      // the session goes on: its next turn runs every plugin and commits once
      behaviour.mode = 'ok';
      const next = await client.submit(id, 'Again');
      expect(await client.waitFor(next.executionId, 20_000)).toBe('committed');
      const after = await read();
      const nextOutputs = outputsOf(after.filter((e) => (e.data as { executionId?: string }).executionId === next.executionId));
      expect(nextOutputs.map((o) => o.runtimeId).sort()).toEqual(['chronicle', 'count', 'narrator', 'sabotage']);
      expect(after.filter((e) => e.type === 'turn.committed@1')).toHaveLength(1);
      expect(await auditedIdentical(covel.engine, id, [turnId, next.turnId])).toEqual([true, true]);
    },
    60_000,
  );
});
