import { buildContext, type ExecutionOutput, fixedText } from '..';
import { narrator, params, tracker } from './fixtures';

const out = (over: Partial<ExecutionOutput>): ExecutionOutput => ({
  pluginId: 'narrator',
  runtimeId: 'narrator',
  outputKind: 'story',
  stageIndex: 1,
  text: 'The door opens.',
  ...over,
});
const t = fixedText('en');

describe("§1 This turn's story text", () => {
  it('story text of an earlier stage follows the player input as an assistant message, then the user-role ending hint', async () => {
    const ctx = await buildContext(params({ runtime: tracker, history: [], executionOutputs: [out({})] }));
    expect(ctx.messages).toEqual([
      { role: 'user', content: 'go north' },
      { role: 'assistant', content: 'The door opens.' },
      { role: 'user', content: t.storyEndingHint },
    ]);
  });

  it('never from runtimes of the same stage or a later one, never non-story output', async () => {
    for (const o of [out({ stageIndex: 2 }), out({ outputKind: 'structured' }), out({ stageIndex: 3 })]) {
      const ctx = await buildContext(params({ runtime: tracker, history: [], executionOutputs: [o] }));
      expect(ctx.messages).toEqual([{ role: 'user', content: 'go north' }]);
    }
  });

  it('a runtime with no stage comes after all stages; stageless output is not projected', async () => {
    const stageless = { ...tracker, stageIndex: null };
    const ctx = await buildContext(
      params({ runtime: stageless, history: [], executionOutputs: [out({ stageIndex: 5 }), out({ stageIndex: null, text: 'other follower' })] }),
    );
    expect(ctx.messageSections).toEqual(['player-input', 'story-text', 'ending-hint']);
  });

  it("maxTurns 0 still sends the player input and this turn's story text", async () => {
    const ctx = await buildContext(params({ runtime: { ...tracker, history: { maxTurns: 0 } }, executionOutputs: [out({})] }));
    expect(ctx.messageSections).toEqual(['player-input', 'story-text', 'ending-hint']);
  });

  describe('sent once: a cardinality-one input equal to the story text becomes one pointer sentence', () => {
    const input = (value: unknown) => ({ binding: 'narrative', cardinality: 'one' as const, value, source: { pluginId: 'narrator', runtimeId: 'narrator' } });

    it('replaced in <runtime-inputs>, source kept', async () => {
      const ctx = await buildContext(params({ runtime: tracker, executionOutputs: [out({})], inputs: [input('The door opens.')] }));
      expect(ctx.turnContext).toContain(JSON.stringify(t.storyPointer));
      expect(ctx.turnContext).not.toContain('The door opens.');
      expect(ctx.turnContext).toContain('"pluginId": "narrator"');
    });

    it("the caller's slots (ctx.inputs, tool inputSlots) keep the original value", async () => {
      const inputs = [input('The door opens.')];
      await buildContext(params({ runtime: tracker, executionOutputs: [out({})], inputs }));
      expect(inputs[0].value).toBe('The door opens.');
    });

    it('a value that only contains the story text is not replaced', async () => {
      const ctx = await buildContext(params({ runtime: tracker, executionOutputs: [out({})], inputs: [input({ summary: 'The door opens.' })] }));
      expect(ctx.turnContext).toContain('The door opens.');
    });

    // rule 1.37's case, "where the story text was not projected" (a retried turn's is: its runtimes all run again, libs/engine/session/test/retry-model.test.ts)
    it('a story text that was not projected (a runtime of the same stage) keeps the original value', async () => {
      const ctx = await buildContext(params({ runtime: tracker, executionOutputs: [out({ stageIndex: 2 })], inputs: [input('The door opens.')] }));
      expect(ctx.turnContext).toContain('The door opens.');
      expect(ctx.messageSections).not.toContain('story-text');
    });
  });
});

describe('§1 History window', () => {
  it("removes other plugins' structured output and empty runtime rows; keeps its own structured output", async () => {
    const { turn } = await import('./fixtures');
    const ctx = await buildContext(
      params({
        runtime: narrator,
        history: turn(1, [{}, { pluginId: 'narrator', outputKind: 'structured', text: 'mine' }, { pluginId: 'narrator', outputKind: 'story', text: '  ' }]),
      }),
    );
    expect(ctx.messages.map((m) => m.content)).toEqual(['input 1', 'story 1', 'mine', 'go north']);
  });

  it('maxTurns counts by turnId over visible messages; image description rows are not turns but stay in the window', async () => {
    const { turn } = await import('./fixtures');
    const imageRow = {
      messageId: 'img',
      turnId: 't2',
      role: 'user' as const,
      sourceType: 'system' as const,
      pluginId: null,
      runtimeId: null,
      outputKind: null,
      text: 'An image was shown here.',
    };
    const hist = [...turn(1), ...turn(2), imageRow, ...turn(3)];
    const ctx = await buildContext(params({ runtime: { ...tracker, history: { maxTurns: 2 } }, history: hist }));
    expect(ctx.messages.map((m) => m.content)).toEqual(['input 2', 'story 2', 'An image was shown here.', 'input 3', 'story 3', 'go north']);
  });

  it('summaries: merged for the shared view; a windowed runtime only with includeSummaries: true', async () => {
    const summaries = [{ id: 's', content: 'Before: <the> war.', messageIds: [] }];
    const shared = await buildContext(params({ summaries }));
    expect(shared.messages[0].role).toBe('user');
    expect(shared.messages[0].content).toMatch(/^<compacted_history>\nBefore: &lt;the&gt; war\.\n<\/compacted_history>\n\n/);
    const windowed = await buildContext(params({ runtime: { ...tracker, history: { maxTurns: 2 } }, summaries }));
    expect(windowed.messageSections).not.toContain('summary');
    const asked = await buildContext(params({ runtime: { ...tracker, history: { maxTurns: 2, includeSummaries: true } }, summaries }));
    expect(asked.messageSections[0]).toBe('summary');
  });
});
