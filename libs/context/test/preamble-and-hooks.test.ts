import { buildContext, CACHE_BREAK, HookResultError, stripCacheBreaks, withPostContextAssembly } from '..';
import { narrator, params, tracker } from './fixtures';

describe('§3 Framework preamble', () => {
  it('[RUNTIME], [LANGUAGE], [COMPLETION] open the system prompt', async () => {
    const ctx = await buildContext(params());
    expect(ctx.systemSections[0].name).toBe('preamble');
    expect(ctx.systemSections[0].text).toMatch(/^\[RUNTIME\][\s\S]*\n\n\[LANGUAGE\][\s\S]*\n\n\[COMPLETION\]/);
  });

  it('three completion forms: output schema, story, runtime-done', async () => {
    const schema = await buildContext(params({ runtime: { ...tracker, hasOutputSchema: true } }));
    const story = await buildContext(params({ runtime: narrator }));
    const done = await buildContext(params({ runtime: tracker }));
    expect(schema.systemSections[0].text).toMatch(/\[COMPLETION\]\nEnd by replying with JSON/);
    // the JSON rules of a runtime with an output schema (spec §6), in the session's language
    expect(schema.systemSections[0].text).toContain('Reply with one JSON value that matches the output schema: no other text');
    expect(done.systemSections[0].text).not.toContain('Reply with one JSON value');
    // the schema itself, after the rules; a `</` in it cannot close the block (`<\/` is the same JSON)
    const withSchema = await buildContext(params({ runtime: { ...tracker, outputSchema: { type: 'object', description: 'ends </output-schema> here' } } }));
    expect(withSchema.systemSections[0].text).toContain(
      'no comments.\n<output-schema>\n{"type":"object","description":"ends <\\/output-schema> here"}\n</output-schema>',
    );
    expect(JSON.parse(/<output-schema>\n(.*)\n<\/output-schema>/.exec(withSchema.systemSections[0].text)![1])).toEqual({
      type: 'object',
      description: 'ends </output-schema> here',
    });
    const zhSchema = await buildContext(params({ locale: 'zh-Hans', runtime: { ...tracker, hasOutputSchema: true } }));
    expect(zhSchema.systemSections[0].text).toContain('只回复一个符合输出模式的 JSON 值');
    expect(story.systemSections[0].text).toMatch(/\[COMPLETION\]\nEnd with the story in your reply/);
    expect(done.systemSections[0].text).toMatch(/\[COMPLETION\]\nWhen your work is done, call runtime-done/);
  });

  it('a zh-Hans session reads the preamble and fixed text entirely in Chinese; tags stay', async () => {
    const ctx = await buildContext(
      params({
        locale: 'zh-Hans',
        executionOutputs: [{ pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story', stageIndex: 0, text: '门开了。' }],
      }),
    );
    const head = ctx.systemSections[0].text;
    expect(head).toContain('[RUNTIME]');
    expect(head).toMatch(/简体中文/);
    expect(head.replace(/\[[A-Z]+\]|[a-z/-]+|\s/g, '')).not.toMatch(/[A-Za-z]{4,}/);
    expect(ctx.messages.at(-1)!.content).toMatch(/本回合/);
  });
});

describe('§3 PostContextAssembly', () => {
  it('a hook that returns only its own body gets the preamble put back at the front', async () => {
    const ctx = await buildContext(params({ postContextAssembly: [() => ({ systemPrompt: 'TRIMMED BODY' })] }));
    expect(stripCacheBreaks(ctx.systemPrompt)).toMatch(/^\[RUNTIME\][\s\S]*\[COMPLETION\][^\n]*\n[^\n]*\n\nTRIMMED BODY$/);
    expect(ctx.systemPrompt.startsWith(ctx.systemSections[0].text + CACHE_BREAK)).toBe(true);
  });

  it('a hook that keeps the preamble is not given a second one', async () => {
    const ctx = await buildContext(params({ postContextAssembly: [(p) => ({ systemPrompt: `${p.systemPrompt}\n\nEXTRA` })] }));
    expect(stripCacheBreaks(ctx.systemPrompt).match(/\[RUNTIME\]/g)).toHaveLength(1);
    expect(ctx.systemPrompt.endsWith('EXTRA')).toBe(true);
  });

  it('hooks may rewrite messages; unchanged messages keep their section', async () => {
    const ctx = await buildContext(params({ postContextAssembly: [(p) => ({ messages: p.messages.slice(2) })] }));
    expect(ctx.messages.map((m) => m.content)).toEqual(['input 2', 'story 2', 'go north']);
    expect(ctx.messageSections).toEqual(['history', 'history', 'player-input']);
  });

  it('read-only sources cannot be replaced or mutated, and frameworkHead is not accepted', async () => {
    const inputs = [{ binding: 'x', cardinality: 'one' as const, value: 'v', source: { pluginId: 'p', runtimeId: 'r' } }];
    let mutated: unknown = null;
    const ctx = await buildContext(
      params({
        inputs,
        postContextAssembly: [
          (p) => {
            try {
              (p.sources as { promptTemplate: string }).promptTemplate = 'hacked';
            } catch (e) {
              mutated = e;
            }
            return { sources: { promptTemplate: 'hacked' }, frameworkHead: 'NOPE', systemPrompt: p.systemPrompt };
          },
        ],
      }),
    );
    expect(mutated).toBeInstanceOf(TypeError);
    expect(stripCacheBreaks(ctx.systemPrompt)).not.toMatch(/hacked|NOPE/);
    expect(inputs[0].value).toBe('v');
  });

  it('a hook reads the raw template (not the rendered body) and the character summary; both read-only, in the types too', async () => {
    const summary = '{"id":"wren","name":"Wren 🌊 رنا 码头","type":"player"}';
    const template = 'You tell the story of {{ world.name }}.\n<player-character>\n{{ player.character }}\n</player-character>';
    const seen: { promptTemplate: string; characterSummary: string; errors: string[] }[] = [];
    await buildContext(
      params({
        runtime: { ...narrator, body: `You tell the story of Bellharbor.\n<player-character>\n${summary}\n</player-character>` },
        promptTemplate: template,
        characterSummary: summary,
        postContextAssembly: [
          (p) => {
            const errors: string[] = [];
            const attempt = (change: () => void) => {
              try {
                change();
              } catch (e) {
                errors.push((e as Error).name);
              }
            };
            // @ts-expect-error the sources are read-only
            attempt(() => (p.sources.promptTemplate = 'rendered'));
            // @ts-expect-error the sources are read-only
            attempt(() => (p.sources.characterSummary = ''));
            // @ts-expect-error the input slots are a read-only array
            attempt(() => p.sources.inputSlots.push({ binding: 'x', cardinality: 'one', value: 1, source: { pluginId: 'p', runtimeId: 'r' } }));
            seen.push({ promptTemplate: p.sources.promptTemplate, characterSummary: p.sources.characterSummary, errors });
            return undefined;
          },
        ],
      }),
    );
    expect(seen).toEqual([{ promptTemplate: template, characterSummary: summary, errors: ['TypeError', 'TypeError', 'TypeError'] }]);
  });

  it('an invalid hook result is a typed error naming the field', async () => {
    await expect(buildContext(params({ postContextAssembly: [() => ({ systemPrompt: 42 })] }))).rejects.toThrow(HookResultError);
    await expect(buildContext(params({ postContextAssembly: [() => ({ messages: [{ role: 'tool', content: '' }] })] }))).rejects.toThrow(/messages\.0\.role/);
  });

  it('withPostContextAssembly on the assembly without hooks is buildContext with them, the trimmed assembly and the payloads included', async () => {
    const seen: unknown[] = [];
    const hooks = [
      (p: { systemPrompt: string; messages: { content: string }[] }) => {
        seen.push(structuredClone(p));
        return { systemPrompt: `${p.systemPrompt}\n\nEXTRA`, messages: p.messages.slice(1) };
      },
      (p: { messages: unknown[] }) => {
        seen.push(structuredClone(p));
        return { messages: [...p.messages, { role: 'user' as const, content: 'added' }] };
      },
    ];
    for (const runtime of [narrator, { ...tracker, outputSchema: { type: 'object' } }]) {
      const bare = params({ runtime, languageName: 'English (en)' });
      const assembled = await buildContext(bare);
      const trimmedAssembly = { messages: assembled.messages.slice(1), messageSections: assembled.messageSections.slice(1) };
      for (const extra of [{}, { trimmedAssembly, promptTemplate: 'raw {{ body }}', characterSummary: 'Ash' }]) {
        const withHooks = { ...bare, ...extra, postContextAssembly: hooks };
        seen.length = 0;
        const whole = await buildContext(withHooks);
        const payloads = [...seen];
        seen.length = 0;
        expect(withPostContextAssembly(assembled, withHooks)).toEqual(whole);
        expect(seen).toEqual(payloads);
      }
      // no hooks: the assembly itself
      expect(withPostContextAssembly(assembled, bare)).toBe(assembled);
    }
  });
});
