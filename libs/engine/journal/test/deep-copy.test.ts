import { isDeepStrictEqual } from 'node:util';
import { deepCopy } from '../deep-copy';

describe('deepCopy (an execution copied for a tentative pass)', () => {
  const execution = () => {
    const shared = { step: 1, reply: '{"text":"😀 漢字"}' };
    const parsed = JSON.parse('{"__proto__": {"x": 1}, "y": [1, 3]}') as Record<string, unknown>;
    return {
      executionId: 'e1',
      outputs: new Map([['p/r', { text: 'x', attempt: 1 }]]),
      extensionResults: new Map([['k', '{"a":1}']]),
      agentLoops: new Map([['p/r', { replies: new Map([[1, shared]]), outcomes: new Map(), ledgers: new Map([[1, [{ tokens: 3 }]]]) }]]),
      emittedTopics: new Set(['t']),
      assets: [{ id: 'a' }],
      suspensions: [{ resumed: undefined, waitingFor: { kind: 'tool' } }],
      lastFormValues: Object.freeze({ name: 'Ann' }),
      payload: parsed,
      at: new Date(0),
      // eslint-disable-next-line no-sparse-arrays -- a hole, as structuredClone keeps it
      sparse: [1, , 3],
      sharedTwice: [shared, shared],
    };
  };

  it('equals it (as structuredClone makes it), holding none of its maps, sets, arrays or objects', () => {
    const original = execution();
    const copy = deepCopy(original);
    // (what structuredClone makes is of another realm under jest, its prototypes not the test's: the date is compared apart)
    const { at: copiedAt, ...copied } = copy;
    const { at: originalAt, ...rest } = original;
    expect(isDeepStrictEqual(copied, rest)).toBe(true);
    expect(copiedAt).not.toBe(originalAt);
    expect(Object.keys(copy.payload)).toEqual(['__proto__', 'y']);
    expect(1 in copy.sparse).toBe(false);
    // an object held twice is copied once, held twice by the copy
    expect(copy.sharedTwice[0]).toBe(copy.sharedTwice[1]);
    expect(copy.sharedTwice[0]).toBe(copy.agentLoops.get('p/r')!.replies.get(1));
    expect(copy.sharedTwice[0]).not.toBe(original.sharedTwice[0]);
    expect(copy.at.getTime()).toBe(0);
    // changing the copy leaves the original as it was
    copy.outputs.get('p/r')!.text = 'changed';
    copy.agentLoops.get('p/r')!.replies.set(2, { step: 2, reply: '' });
    copy.agentLoops.get('p/r')!.ledgers.get(1)!.push({ tokens: 9 });
    copy.emittedTopics.add('u');
    copy.suspensions[0]!.resumed = { resumeId: 'r' } as never;
    copy.sharedTwice[0]!.step = 5;
    (copy.payload.y as unknown[]).push(4);
    const { at, ...after } = original;
    expect(at.getTime()).toBe(0);
    expect(isDeepStrictEqual(after, (({ at: _, ...fresh }) => fresh)(execution()))).toBe(true);
  });
});
