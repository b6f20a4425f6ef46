import type { StoredEvent } from '../../../events';
import { SessionJournal } from '../journal';

/** Stored events for the journal's fold (it reads the type, the data and the stream version). */
const stored = (version: number, type: string, data: Record<string, unknown>) => ({ type, data, streamVersion: version }) as unknown as StoredEvent;

const submitted = (version: number, executionId: string) =>
  stored(version, 'player-input.submitted@1', { executionId, turnId: `t-${executionId}`, messageId: `m-${executionId}`, text: 'go' });

describe('SessionJournal.tentatively (the builds of a group commit)', () => {
  it('the pass sees the events it applies; afterwards the journal, and every execution read from it, is as before', () => {
    const journal = new SessionJournal([submitted(1, 'e1'), stored(2, 'execution.started@1', { executionId: 'e1', attempt: 1 })]);
    const held = journal.get('e1')!;
    const seen = journal.tentatively((apply) => {
      apply([
        stored(3, 'runtime.output.produced@1', {
          executionId: 'e1',
          stage: null,
          pluginId: 'p',
          runtimeId: 'r',
          outputKind: 'story',
          messageId: 'o1',
          text: 'x',
          attempt: 1,
        }),
        stored(4, 'plugin-data.written@1', { pluginId: 'p' }),
        submitted(5, 'e2'),
      ]);
      return {
        version: journal.version,
        pluginDataVersion: journal.pluginDataVersion,
        outputs: [...journal.get('e1')!.outputs.keys()],
        pending: journal.pending().map((e) => e.executionId),
        copied: journal.get('e1') !== held,
      };
    });
    expect(seen).toEqual({ version: 5, pluginDataVersion: 4, outputs: ['p/r'], pending: ['e1', 'e2'], copied: true });
    expect(journal.version).toBe(2);
    expect(journal.pluginDataVersion).toBe(0);
    expect(journal.get('e1')).toBe(held);
    expect(held.outputs.size).toBe(0);
    expect(journal.get('e2')).toBeUndefined();
    expect(journal.pending().map((e) => e.executionId)).toEqual(['e1']);
    // and it goes on from where it was
    journal.apply([stored(3, 'execution.failed@1', { executionId: 'e1' })]);
    expect(held.status).toBe('failed');
  });

  it('a pass that throws puts the journal back too', () => {
    const journal = new SessionJournal([submitted(1, 'e1')]);
    expect(() =>
      journal.tentatively((apply) => {
        apply([stored(2, 'execution.cancelled@1', { executionId: 'e1' })]);
        throw new Error('build failed');
      }),
    ).toThrow('build failed');
    expect(journal.version).toBe(1);
    expect(journal.get('e1')!.status).toBe('pending');
  });
});
