import { join } from 'node:path';
import type { Reply, ScriptedCall } from '../../../emulator';
import type { ToolDefinition } from '../../../providers';
import type { ToolOutcome, ToolSet } from '../../tools';
import { auditTurn } from '../../audit/turn-audit';
import { historyReadLimit } from '../../execution/deps';
import { TurnRunner } from '../../turn/turn-runner';
import { eventually, type TurnHarness, turnHarness } from '../../turn/test/harness';

const DEFINITIONS: ToolDefinition[] = [
  { name: 'note', description: 'Notes a line in the ledger.', parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] } },
  { name: 'lookup', description: 'Looks a line up.', parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] } },
  { name: 'runtime-done', description: 'Ends the runtime.', parameters: { type: 'object', properties: {} } },
];
let executions = 0;
const tools: ToolSet = {
  definitions: (runtime) => DEFINITIONS.filter((d) => runtime.manifest.agent?.tools.includes(d.name)),
  async execute(call): Promise<ToolOutcome> {
    executions++;
    const key = String(call.arguments.key ?? '');
    if (call.name === 'runtime-done') return { content: '{"ok":true}', ok: true, changes: [], emissions: [], done: true };
    if (call.name === 'note') return { content: '{"noted":true}', ok: true, changes: [{ namespace: 'ledger', key, value: { seen: key } }], emissions: [] };
    return { content: JSON.stringify({ key, found: true }), ok: true, changes: [], emissions: [] };
  },
};

/** The ledger runtime: two tools per turn (note, lookup), then runtime-done; the narrator tells its story. */
function script(call: ScriptedCall): Reply | undefined {
  if (!(call.transcript[0]?.content ?? '').includes('runtime ledger/ledger')) return undefined;
  // the current turn is the highest turn number the request mentions; the loop's messages come after the last user message
  const turn = Math.max(
    ...[
      ...call.transcript
        .map((m) => m.content)
        .join('\n')
        .matchAll(/turn (\d+): walk on/g),
    ].map((m) => Number(m[1])),
  );
  const input = `turn-${turn}`;
  const lastUser = call.transcript.map((m) => m.role).lastIndexOf('user');
  const results = call.transcript.slice(lastUser).filter((m) => m.role === 'tool').length;
  if (results === 0) return { kind: 'tool', name: 'note', args: { key: input } };
  if (results === 1) return { kind: 'tool', name: 'lookup', args: { key: input } };
  return { kind: 'tool', name: 'runtime-done', args: {} };
}

describe('a 10-turn session whose bookkeeping runtime uses two tools per turn', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: join(__dirname, 'fixtures-turns'), script, tools, handlers: (deps) => new TurnRunner(deps) });
  });
  afterAll(() => h.close());

  it('every turn commits; each model call and each tool execution happens once; the audit rebuilds every step of every turn byte for byte', async () => {
    const session = await h.session();
    const turnIds: string[] = [];
    for (let i = 1; i <= 10; i++) {
      const job = await h.input(session, `turn ${i}: walk on`);
      await h.queue.enqueue(job);
      const committed = async () => (await h.events(session.sessionId)).some((e) => e.type === 'turn.committed@1' && e.data.executionId === job.executionId);
      await eventually(committed, `turn ${i} committed`);
      turnIds.push(job.turnId);
    }
    const events = await h.events(session.sessionId);
    const calls = events.filter((e) => e.type === 'llm.calling@1');
    // per turn: the narrator's one call, the ledger's three steps
    expect(calls).toHaveLength(40);
    expect(events.filter((e) => e.type === 'llm.responded@1')).toHaveLength(40);
    expect(events.filter((e) => e.type === 'tool.completed@1')).toHaveLength(30);
    expect(executions).toBe(30);
    expect(events.filter((e) => e.type === 'plugin-data.written@1')).toHaveLength(10);
    for (const turnId of turnIds) {
      const audit = await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, turnId);
      expect(audit.calls.map((c) => c.identical)).toEqual([true, true, true, true]);
    }
  }, 120_000);
});
