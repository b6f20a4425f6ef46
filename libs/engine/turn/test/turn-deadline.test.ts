import { join } from 'node:path';
import type { Reply, ScriptedCall } from '../../../emulator';
import type { ToolDefinition } from '../../../providers';
import type { ToolOutcome, ToolSet } from '../../tools';
import { claimExecution } from '../claim';
import { runRuntimeStep } from '../runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { type TurnHarness, turnHarness } from './harness';

/**
 * The turn deadline bounds the time an attempt waits on its model, on the worker's own clock from
 * the attempt's first model call: a job that starts later than the deadline after its execution
 * was first started (it waited in a busy queue, for a database that was away, for a worker to
 * restart) still runs and commits; it is not failed `TURN_DEADLINE` before it has sent a call.
 * (A call that outlives the deadline: test/unit/provider-deadlines-embedded.test.ts.)
 */
const DEADLINE_MS = 2_000;
const DEFINITIONS: ToolDefinition[] = [
  { name: 'lookup', description: 'Looks a thing up.', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
];
const tools: ToolSet = {
  definitions: (runtime) => DEFINITIONS.filter((d) => runtime.manifest.agent?.tools.includes(d.name)),
  execute: async (call): Promise<ToolOutcome> => ({ content: JSON.stringify({ found: call.arguments.q }), ok: true, changes: [], emissions: [] }),
};
function script(call: ScriptedCall): Reply | undefined {
  const system = call.transcript[0]?.content ?? '';
  if (!system.includes('runtime teller/teller')) return undefined;
  if (call.toolResults === 0) return { kind: 'tool', name: 'lookup', args: { q: 'gate' } };
  return { kind: 'text', text: 'The gate opens onto the salt road.' };
}
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the turn deadline counts only the time an attempt waits on its model', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({
      pluginsDir: join(__dirname, '../../agent/test/fixtures-stream'),
      script,
      tools,
      turnDeadlineMs: DEADLINE_MS,
    });
  });
  afterAll(() => h.close());

  async function claim(job: { tenantId: string; sessionId: string; executionId: string; turnId: string }) {
    const journal = await loadSessionJournal(h.deps, job);
    return { ...job, attempt: (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))!, pluginId: 'teller', runtimeId: 'teller' };
  }

  it('a job that starts after more than the deadline since the execution started (a busy queue, a database away) runs and produces', async () => {
    const input = await h.input(await h.session(), 'Walk to the gate');
    const job = await claim(input); // execution.started recorded now
    await pause(DEADLINE_MS * 1.5);
    expect(await runRuntimeStep(h.deps, job)).toBe('produced');
  }, 30_000);

  it('a retried attempt (a worker killed, restarted later than the time left) gets its own clock', async () => {
    const input = await h.input(await h.session(), 'Walk to the gate');
    await claim(input);
    await pause(DEADLINE_MS * 1.5);
    const retried = await claim(input);
    expect(retried.attempt).toBe(2);
    expect(await runRuntimeStep(h.deps, retried)).toBe('produced');
    const started = (await h.types(input.sessionId)).filter((t) => t === 'execution.started@1');
    expect(started).toHaveLength(2);
  }, 30_000);
});
