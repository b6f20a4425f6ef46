import { randomUUID } from 'node:crypto';
import { estimateTokens, type LedgerEntry } from '../../../context';
import type { StoredEvent } from '../../../events';
import { callOutputLimit, type ChatMessage, parseLlmConfig, SlotConfigError } from '../../../providers';
import { inputWindow } from '../../barrier/trigger';
import { runtimeKey, SessionJournal } from '../../journal/journal';
import { checkSlotLimits, contextKinds, hookedKinds, rememberingEstimator, runLedger, slotEstimator, slotLimits } from '..';

const llm = (story: string, fast = 'contextWindow = 128000\nmaxOutputTokens = 512') =>
  parseLlmConfig(`
[slots.story]
protocol = "openai-chat"
model = "gpt-4.1-mini"
${story}

[slots.fast]
protocol = "openai-chat"
model = "gpt-4.1-nano"
${fast}
`);
const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('token limits and the response reserve', () => {
  it('the reserve defaults to maxOutputTokens; it sets the input limit (the barrier too) and caps the output of each call', () => {
    const plain = llm('contextWindow = 8192\nmaxOutputTokens = 1024').slots.story;
    expect(slotLimits(plain)).toEqual({ contextWindow: 8192, responseReserve: 1024 });
    expect(callOutputLimit(plain)).toBe(1024);
    expect(inputWindow(plain)).toBe(7168);
    const reserved = llm('contextWindow = 8192\nmaxOutputTokens = 1024\nresponseReserve = 600').slots.story;
    expect(slotLimits(reserved)).toEqual({ contextWindow: 8192, responseReserve: 600 });
    expect(callOutputLimit(reserved)).toBe(600);
    expect(inputWindow(reserved)).toBe(8192 - 600);
    // a reserve above maxOutputTokens keeps more room free but does not raise the output limit
    const roomy = llm('contextWindow = 8192\nmaxOutputTokens = 1024\nresponseReserve = 2000').slots.story;
    expect(callOutputLimit(roomy)).toBe(1024);
    expect(inputWindow(roomy)).toBe(8192 - 2000);
  });

  it('a reserve that does not fit in the window is LLM_CONFIG_INVALID, naming slots.<name>.<field>; valid limits pass', () => {
    expect(() => checkSlotLimits(llm('contextWindow = 8192\nmaxOutputTokens = 1024'), 'llm.toml')).not.toThrow();
    const reserve = thrown(() => checkSlotLimits(llm('contextWindow = 8192\nmaxOutputTokens = 1024\nresponseReserve = 8192'), 'llm.toml'));
    expect(reserve).toBeInstanceOf(SlotConfigError);
    expect((reserve as SlotConfigError).code).toBe('LLM_CONFIG_INVALID');
    expect((reserve as SlotConfigError).issues.map((i) => i.path)).toEqual(['slots.story.responseReserve']);
    // without a responseReserve the default one is maxOutputTokens: that is the field named
    const output = thrown(() => checkSlotLimits(llm('contextWindow = 8192\nmaxOutputTokens = 1024', 'contextWindow = 512\nmaxOutputTokens = 512'), 'x.toml'));
    expect((output as SlotConfigError).issues.map((i) => i.path)).toEqual(['slots.fast.maxOutputTokens']);
    expect((output as SlotConfigError).message).toMatch(/^x\.toml: slots\.fast\.maxOutputTokens: /);
  });

  it('a non-positive reserve or an unknown tokenizer is refused when llm.toml is read', () => {
    const zero = thrown(() => llm('contextWindow = 8192\nmaxOutputTokens = 1024\nresponseReserve = 0'));
    expect((zero as SlotConfigError).issues.map((i) => i.path)).toEqual(['slots.story.responseReserve']);
    const tokenizer = thrown(() => llm('contextWindow = 8192\nmaxOutputTokens = 1024\ntokenizer = "p50k_base"'));
    expect((tokenizer as SlotConfigError).issues.map((i) => i.path)).toEqual(['slots.story.tokenizer']);
  });
});

describe('the estimator of a slot', () => {
  const sample = 'The caravan walks the salt road at dusk; 商队在黄昏时沿着盐路前行。 {"q":"gate"}';

  it("is the spec's character estimate without a tokenizer, the model's encoding with one (o200k and cl100k differ on it)", async () => {
    expect(await slotEstimator({})).toBe(estimateTokens);
    const o200k = await slotEstimator({ tokenizer: 'o200k_base' });
    const cl100k = await slotEstimator({ tokenizer: 'cl100k_base' });
    expect(o200k(sample)).not.toBe(estimateTokens(sample));
    expect(o200k(sample)).not.toBe(cl100k(sample));
    expect(o200k('Hello, world!')).toBe(4);
    // special-token text in content is counted as text, never refused
    expect(o200k('a <|endoftext|> b')).toBeGreaterThan(3);
  });
});

describe('the kinds of a request', () => {
  it('context messages: summary envelope, protected current turn (protectedIndexes), history; the system prompt first', () => {
    const kinds = contextKinds({ messageSections: ['summary', 'history', 'history', 'turn-context', 'player-input'], protectedIndexes: [0, 3, 4] });
    expect(kinds).toEqual(['system-prompt', 'summary', 'history', 'history', 'protected', 'protected']);
  });

  it('after the PreLLMCall hooks: a kept message keeps its kind (by identity, else role and content, each matched once), an added one is other', () => {
    const m = (role: ChatMessage['role'], content: string): ChatMessage => ({ role, content });
    const before = [m('system', 'S'), m('user', 'old'), m('user', 'go'), m('tool', 'r')];
    const kinds = ['system-prompt', 'history', 'protected', 'loop'] as const;
    // a hook dropped the history message, added a note, and its result came back as JSON (new objects)
    const after = [before[0], m('system', 'note'), m('user', 'go'), m('tool', 'r'), m('tool', 'r')];
    expect(hookedKinds(before, kinds, after)).toEqual(['system-prompt', 'other', 'protected', 'loop', 'other']);
  });
});

describe('the per-run ledger', () => {
  const entry = (id: string): LedgerEntry => ({ kind: 'collapse', calls: [{ id, name: 'lookup', arguments: '{}', result: id }] });

  it("folds each step's recorded additions (the first call per step: a fallback's are not added twice), in step order, per runtime", () => {
    const executionId = randomUUID();
    const turnId = randomUUID();
    let version = 0;
    const event = (type: string, data: Record<string, unknown>) => ({ type, data, streamVersion: ++version }) as unknown as StoredEvent;
    const calling = (step: number, added: LedgerEntry[], runtimeId = 'digger') =>
      event('llm.calling@1', {
        executionId,
        turnId,
        attempt: 1,
        callId: randomUUID(),
        pluginId: 'digger',
        runtimeId,
        provider: 'openai-chat',
        model: 'm',
        step,
        body: '{}',
        budget: { mode: 'normal', added, stats: { inputLimit: 10, before: 1, after: 1, elided: 0, collapsed: 0, pruned: 0, truncated: 0 } },
      });
    const journal = new SessionJournal([
      event('player-input.submitted@1', { executionId, turnId, messageId: randomUUID(), text: 'go' }),
      calling(1, [entry('a')]),
      calling(2, [entry('b')]),
      calling(2, [entry('b-again')]),
      calling(1, [entry('other')], 'teller'),
      calling(3, []),
    ]);
    const ledgers = journal.get(executionId)!.agentLoops.get(runtimeKey('digger', 'digger'))!.ledgers;
    expect(runLedger(ledgers, 1).entries).toEqual([]);
    expect(runLedger(ledgers, 2).entries).toEqual([entry('a')]);
    expect(runLedger(ledgers, 4).entries).toEqual([entry('a'), entry('b')]);
    expect(runLedger(undefined, 4).entries).toEqual([]);
  });
});

describe("one request's estimator", () => {
  it('counts each text once, with the figures of the estimator it keeps', () => {
    const counted: string[] = [];
    const estimator = rememberingEstimator((text) => {
      counted.push(text);
      return estimateTokens(text);
    });
    const texts = ['You are the narrator.', '门开了。', 'You are the narrator.', `${'You are the'} narrator.`, ''];
    expect(texts.map(estimator)).toEqual(texts.map(estimateTokens));
    expect(counted).toEqual(['You are the narrator.', '门开了。', '']);
    // another request's estimator starts empty
    const again = rememberingEstimator((text) => {
      counted.push(text);
      return 1;
    });
    expect(again('门开了。')).toBe(1);
    expect(counted).toHaveLength(4);
  });

  it("keeps a long text's figure for the next request: the same system prompt or history message is not counted again", () => {
    const counted: string[] = [];
    const counter = (text: string) => {
      counted.push(text);
      return estimateTokens(text);
    };
    const long = `You are the narrator of Emberback. ${'门开了。 The ember glows. '.repeat(60)}`;
    const short = 'You are the narrator.';
    // the worker's own memory (per estimator function): a second request counts neither the long text again
    const first = rememberingEstimator(counter);
    expect([first(long), first(short)]).toEqual([estimateTokens(long), estimateTokens(short)]);
    const second = rememberingEstimator(counter);
    // the same text built anew (another string object) is found by its content
    expect([second([...long].join('')), second(short)]).toEqual([estimateTokens(long), estimateTokens(short)]);
    expect(counted).toEqual([long, short, short]);
  });
});
