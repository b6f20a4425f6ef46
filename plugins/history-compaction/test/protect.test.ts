import { protectedStart } from '../server/protect';
import { ids, loadProvider, message, ScriptedModel, stop, turns } from './support';

const windows = { effective: 100_000, fastInput: 100_000 };

describe('protection: the last two user turns and the last five messages, whichever protects more', () => {
  it('two-message turns: the last five messages protect more than the last two turns (four messages)', () => {
    const history = turns(10);
    expect(protectedStart(history)).toBe(15);
  });

  it('three-message turns: the last two user turns (six messages) protect more than the last five messages', () => {
    const history = turns(10).flatMap((m, i) =>
      i % 2 === 1 ? [m, message(`${m.messageId}-img`, Number(m.turnId.slice(5)), 'image', 'An image was shown here.')] : [m],
    );
    expect(history).toHaveLength(30);
    expect(protectedStart(history)).toBe(24);
  });

  it('image description rows and activations without player input are not user turns', () => {
    const history = [
      ...turns(4),
      message('act-1', 5, 'story', 'An event follower ran without player input.'),
      message('img-1', 6, 'image', 'An image was shown here.'),
      message('act-2', 7, 'story', 'Another activation.'),
      message('img-2', 7, 'image', 'Another image.'),
      message('act-3', 8, 'story', 'A third activation.'),
      message('act-4', 9, 'story', 'A fourth activation.'),
    ];
    // the last two user turns are turns 3 and 4 (index 4): they protect more than the last five messages (index 9)
    expect(protectedStart(history)).toBe(4);
  });

  it('with fewer than two user turns every user turn is protected; with none, the last five messages', () => {
    expect(protectedStart(turns(1))).toBe(0);
    expect(protectedStart([message('a', 1, 'story', 'x'), message('b', 1, 'story', 'y'), ...turns(1, 10, 2)])).toBe(0);
    const activations = Array.from({ length: 8 }, (_, i) => message(`a${i}`, i + 1, 'story', 'An activation.'));
    expect(protectedStart(activations)).toBe(3);
  });

  it('the provider never summarizes a protected message, and never splits a turn at the protected edge', async () => {
    const { compact } = await loadProvider();
    const history = turns(10);
    const model = new ScriptedModel([stop('## Events\nThe first eight turns went by.')]);
    const result = await compact({ messages: history, summaries: [], windows }, model);
    // the last five messages start inside turn 8 (its story reply): turn 8 is kept whole
    expect(result.summaries).toHaveLength(1);
    expect(result.summaries[0].messageIds).toEqual(ids(history.slice(0, 14)));
    expect(model.requests[0].prompt).toContain(history[13].text);
    expect(model.requests[0].prompt).not.toContain(history[14].text);
  });

  it('nothing before the protected messages: no summary call, nothing returned', async () => {
    const { compact } = await loadProvider();
    const model = new ScriptedModel([]);
    expect(await compact({ messages: turns(2), summaries: [], windows }, model)).toEqual({ summaries: [] });
    expect(model.requests).toHaveLength(0);
  });
});
