import { buildContext, stripCacheBreaks } from '..';
import { params, segment } from './fixtures';

const slot = (binding: string, value: unknown) => ({
  binding,
  cardinality: 'one' as const,
  value,
  source: { pluginId: 'p', runtimeId: 'r', resultId: '8a1c2f3e-1111-4222-8333-944445555666' },
});

describe('§2 Turn context', () => {
  it('holds io.selfData rows (the injected blocks), <runtime-inputs>, <runtime-exports>, event activation with payload, then turn segments', async () => {
    const ctx = await buildContext(
      params({
        selfData: [
          { namespace: 'status', rows: [{ key: 'hp', value: { id: 'hp', now: 3, updatedAt: '2026-01-02T03:04:05Z' } }], totalRows: 1 },
          { namespace: 'scene', rows: [{ key: 'hall', value: 'A <dark> hall' }], totalRows: 1 },
        ],
        inputs: [slot('mood', 'grim')],
        exports: [{ name: 'facts', value: ['f1'], source: { pluginId: 'p', runtimeId: 'r' } }],
        activation: { kind: 'event', topic: 'door.opened', payload: { door: 'north' } },
        segments: [segment('memory', { volatility: 'turn' })],
      }),
    );
    const tc = ctx.turnContext;
    const order = [
      '<self-data namespace="status">',
      '<self-data namespace="scene">',
      '<runtime-inputs>',
      '<runtime-exports>',
      '<runtime-activation>',
      '<memory/>',
    ];
    const at = order.map((s) => tc.indexOf(s));
    expect(at.every((p) => p >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(tc).toContain('- hp | {"now":3}'); // no updatedAt; id equal to the key not repeated
    expect(tc).toContain('A &lt;dark&gt; hall'); // data is escaped
    expect(tc).toContain('"door": "north"');
    expect(tc).not.toContain('8a1c2f3e'); // resultId stays with tools
    expect(ctx.messages.filter((m) => m.role === 'system')).toEqual([{ role: 'system', content: tc }]);
    expect(stripCacheBreaks(ctx.systemPrompt)).not.toContain('runtime-inputs');
  });

  it('in-stage activations stay in the system prompt, event/manual ones go to the turn context', async () => {
    const inStage = await buildContext(params({ activation: { kind: 'stage', stage: 'narrative' } }));
    expect(inStage.turnContext).toBe('');
    expect(stripCacheBreaks(inStage.systemPrompt)).toContain('<runtime-activation>');
    const manual = await buildContext(params({ activation: { kind: 'manual', payload: { by: 'player' } } }));
    expect(manual.turnContext).toContain('<runtime-activation>');
    expect(manual.turnContext).toContain('"by": "player"');
    expect(stripCacheBreaks(manual.systemPrompt)).not.toContain('<runtime-activation>');
  });

  it('the selfData truncation note states the total', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: i }));
    const ctx = await buildContext(params({ selfData: [{ namespace: 'n', rows, totalRows: 80 }] }));
    expect(ctx.turnContext).toContain('(50 of 80 rows shown)');
  });

  it('§4 data boundary: UUIDs, ISO times and sessionId are removed from values; readable ids and dates stay', async () => {
    const ctx = await buildContext(
      params({
        inputs: [
          slot('facts', {
            id: 'npc-mira',
            date: 'Year 3, spring',
            sessionId: 's-1',
            ref: '0f8fad5b-d9cb-469f-a165-70867728950e',
            at: '2026-03-01T10:00:00.000Z',
          }),
        ],
      }),
    );
    expect(ctx.turnContext).toContain('"id": "npc-mira"');
    expect(ctx.turnContext).toContain('Year 3, spring');
    expect(ctx.turnContext).not.toMatch(/sessionId|0f8fad5b|2026-03-01/);
  });

  it('<runtime-exports>: each name in the order given, its value through the data boundary, source { pluginId, runtimeId } without resultId; none: no block', async () => {
    const source = (pluginId: string) => ({ pluginId, runtimeId: 'keeper', resultId: '8a1c2f3e-1111-4222-8333-944445555666' });
    const ctx = await buildContext(
      params({
        exports: [
          { name: 'threads', value: ['the <sealed> door'], source: source('tracker') },
          { name: 'scene', value: { place: 'the mill', ref: '0f8fad5b-d9cb-469f-a165-70867728950e', at: '2026-03-01T10:00:00.000Z' }, source: source('scout') },
        ],
      }),
    );
    const inner = /^<runtime-exports>\n([\s\S]*)\n<\/runtime-exports>$/.exec(ctx.turnContext)![1];
    expect(inner).toContain('the &lt;sealed&gt; door'); // data is escaped
    const parsed = JSON.parse(inner.replace(/&lt;/g, '<').replace(/&gt;/g, '>')) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['threads', 'scene']);
    expect(parsed).toEqual({
      threads: { value: ['the <sealed> door'], source: { pluginId: 'tracker', runtimeId: 'keeper' } },
      scene: { value: { place: 'the mill' }, source: { pluginId: 'scout', runtimeId: 'keeper' } },
    });
    expect(ctx.turnContext).not.toContain('8a1c2f3e');
    expect((await buildContext(params({ exports: [] }))).turnContext).toBe('');
  });

  it('tag names keep their form: the text writes runtime-inputs.<binding>.value', async () => {
    const ctx = await buildContext(params({ inputs: [slot('mood', 'grim')] }));
    const json = ctx.turnContext.replace(/^<runtime-inputs>\n|\n<\/runtime-inputs>$/g, '');
    expect(JSON.parse(json)).toEqual({ mood: { cardinality: 'one', value: 'grim', source: { pluginId: 'p', runtimeId: 'r' } } });
  });
});
