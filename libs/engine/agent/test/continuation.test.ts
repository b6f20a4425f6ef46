import { join } from 'node:path';
import type { NewEvent, StoredEvent } from '../../../events';
import { loadPlugins } from '../../../plugins-sdk';
import { runLedger } from '../../budget';
import { executionRequestInputs } from '../../inputs';
import { SessionJournal, waitingSuspension } from '../../journal/journal';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';
import { resumedStep } from '../suspension';

const PLUGINS = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'pause-plugins');
const ids = { executionId: 'e1', turnId: 't1' };
const call = { pluginId: 'gate', runtimeId: 'narrator', step: 1, toolCallId: 'call-1' };

/** The journal after these events, in order (stream versions 1..n). */
function journalOf(events: readonly NewEvent[]): SessionJournal {
  const stored = events.map(
    (e, i) =>
      ({
        ...e,
        globalPosition: i + 1,
        tenantId: 'tn',
        streamId: 's1',
        streamVersion: i + 1,
        metadata: {},
        recordedAt: new Date(0).toISOString(),
      }) as StoredEvent,
  );
  return new SessionJournal(stored);
}

const submitted: NewEvent = { type: 'player-input.submitted@1', data: { ...ids, messageId: 'm1', text: 'Open the vault' } };
const started: NewEvent = { type: 'execution.started@1', data: { ...ids, attempt: 1, workerId: 'w1' } };
const facts: NewEvent = {
  type: 'runtime.output.produced@1',
  data: {
    ...ids,
    attempt: 1,
    stage: 'pre-turn',
    pluginId: 'facts',
    runtimeId: 'facts',
    outputKind: 'structured',
    messageId: 'r1',
    text: JSON.stringify({ mood: 'tense' }),
  },
};
// a continuation whose frozen values differ from what resolving again would give: which one a request reads shows
const suspended: NewEvent = {
  type: 'execution.suspended@1',
  data: {
    ...ids,
    ...call,
    attempt: 1,
    name: 'ask-approval',
    currentTurnUserMessages: [
      { role: 'user', content: 'Open the vault' },
      { role: 'user', content: 'and hurry' },
    ],
    inputs: [{ binding: 'mood', cardinality: 'one', value: 'frozen', source: { pluginId: 'facts', runtimeId: 'facts' } }],
    waitingFor: { kind: 'approval', prompt: 'Open the vault?' },
  },
};
const resumed: NewEvent = { type: 'execution.resumed@1', data: { ...ids, ...call, resumeId: 'r1', payload: { approved: true } } };

describe('the continuation of a suspended runtime (spec §1, §3, §5)', () => {
  const catalog = new RuntimeCatalog(loadPlugins(PLUGINS));
  const narrator = catalog.find('gate', 'narrator')!;

  it('before a suspension the inputs are resolved and there is no saved range', () => {
    const execution = journalOf([submitted, started, facts]).get('e1')!;
    const { inputs, resume } = executionRequestInputs(catalog, narrator, execution);
    expect(inputs.map((i) => [i.binding, i.value])).toEqual([['mood', 'tense']]);
    expect(resume).toBeUndefined();
  });

  it('after it, the frozen input slots and the saved protected range are used, not resolved again; the execution waits until its resume', () => {
    const journal = journalOf([submitted, started, facts, suspended]);
    const execution = journal.get('e1')!;
    expect(waitingSuspension(execution)).toMatchObject({ ...call, waitingFor: { kind: 'approval' } });
    const { inputs, resume } = executionRequestInputs(catalog, narrator, execution);
    expect(inputs.map((i) => [i.binding, i.value])).toEqual([['mood', 'frozen']]);
    expect(resume?.currentTurnUserMessages.map((m) => m.content)).toEqual(['Open the vault', 'and hurry']);
    // another runtime of the execution resolves its own
    expect(executionRequestInputs(catalog, catalog.find('facts', 'facts')!, execution).resume).toBeUndefined();
    expect(resumedStep(execution, narrator)).toBeUndefined();

    const after = journalOf([submitted, started, facts, suspended, resumed]).get('e1')!;
    expect(waitingSuspension(after)).toBeUndefined();
    expect(after.suspensions[0].resumed).toEqual({ resumeId: 'r1', payload: { approved: true } });
    expect(executionRequestInputs(catalog, narrator, after).inputs.map((i) => i.value)).toEqual(['frozen']);
    // resume starts a new ledger: what the steps up to the suspended one added is left out
    expect(resumedStep(after, narrator)).toBe(1);
    const ledgers = new Map([
      [1, [{ kind: 'elide', id: 'a' }] as never],
      [2, [{ kind: 'elide', id: 'b' }] as never],
    ]);
    expect(runLedger(ledgers, 3).entries).toHaveLength(2);
    expect(runLedger(ledgers, 3, resumedStep(after, narrator)).entries).toEqual([{ kind: 'elide', id: 'b' }]);
  });

  it('a resume for another call, or a second record of the same suspension, changes nothing', () => {
    const other: NewEvent = { type: 'execution.resumed@1', data: { ...ids, ...call, toolCallId: 'call-2', resumeId: 'r2', payload: null } };
    const execution = journalOf([submitted, started, facts, suspended, suspended, other]).get('e1')!;
    expect(execution.suspensions).toHaveLength(1);
    expect(waitingSuspension(execution)).toBeDefined();
  });
});
