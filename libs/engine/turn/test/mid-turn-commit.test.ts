import { join } from 'node:path';
import type { StoredEvent } from '../../../events';
import { loadPlugins } from '../../../plugins-sdk';
import { SessionJournal } from '../../journal/journal';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';
import { committedMessages } from '../../execution/commit';

/**
 * Where the commit puts the player's mid-turn messages (issue 16 part 2): each right before the
 * first output, in commit order, recorded after it arrived (an output that may have read it comes
 * after it), in arrival order, each once; those that came after every output last. Runtimes of
 * test/fixtures/two-story-plugins, in commit order: alpha/teller and beta/teller (stage narrative),
 * then alpha/echo (no stage); all three write story text.
 */
const catalog = new RuntimeCatalog(loadPlugins(join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'two-story-plugins')));
const ids = { executionId: 'e1', turnId: 't1' };

function journalOf(steps: ({ mid: string } | { output: string })[]) {
  let version = 0;
  const event = (type: string, data: Record<string, unknown>) => ({ type, data, streamVersion: ++version }) as unknown as StoredEvent;
  const events = [
    event('player-input.submitted@1', { ...ids, messageId: 'input', text: 'Open the gate' }),
    event('execution.started@1', { ...ids, attempt: 1, workerId: 'w' }),
    ...steps.map((s) => {
      if ('mid' in s) return event('player-input.mid-turn@1', { ...ids, messageId: s.mid, text: `say ${s.mid}` });
      const [pluginId, runtimeId] = s.output.split('/');
      return event('runtime.output.produced@1', {
        ...ids,
        attempt: 1,
        stage: runtimeId === 'echo' ? null : 'narrative',
        pluginId,
        runtimeId,
        outputKind: 'story',
        messageId: s.output,
        text: `story of ${s.output}`,
      });
    }),
  ];
  return new SessionJournal(events).get('e1')!;
}

const order = (steps: Parameters<typeof journalOf>[0]) => committedMessages(catalog, journalOf(steps)).map((m) => m.messageId);

describe('mid-turn messages in the commit', () => {
  it('a message before every output comes right after the input; the story follows', () => {
    expect(order([{ mid: 'm1' }, { mid: 'm2' }, { output: 'alpha/teller' }, { output: 'beta/teller' }, { output: 'alpha/echo' }])).toEqual([
      'input',
      'm1',
      'm2',
      'alpha/teller',
      'beta/teller',
      'alpha/echo',
    ]);
  });

  it('each goes before the first output recorded after it, in order, once; one after every output goes last', () => {
    expect(
      order([{ output: 'alpha/teller' }, { mid: 'm1' }, { output: 'beta/teller' }, { mid: 'm2' }, { mid: 'm3' }, { output: 'alpha/echo' }, { mid: 'm4' }]),
    ).toEqual(['input', 'alpha/teller', 'm1', 'beta/teller', 'm2', 'm3', 'alpha/echo', 'm4']);
    // in a stage the commit order is the catalog's: a message is never put after an output that came after it
    expect(order([{ output: 'beta/teller' }, { mid: 'm1' }, { output: 'alpha/teller' }, { output: 'alpha/echo' }])).toEqual([
      'input',
      'm1',
      'alpha/teller',
      'beta/teller',
      'alpha/echo',
    ]);
  });

  it('rows are the player text: role user, sourceType player', () => {
    const rows = committedMessages(catalog, journalOf([{ mid: 'm1' }, { output: 'alpha/teller' }]));
    expect(rows[1]).toEqual({ messageId: 'm1', role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: 'say m1' });
  });
});
