import type { RuntimeOutput } from '../../journal/journal';
import { plugin, pluginFolders } from './plugin-folders';
import { InputBindingError, resolveInputSlots } from '..';

describe('resolveInputSlots', () => {
  const folders = pluginFolders('covel-inputs-');
  afterAll(() => folders.cleanUp());
  const catalogOf = folders.catalogOf;
  const output = (pluginId: string, text: string, outputKind: RuntimeOutput['outputKind'] = 'structured'): RuntimeOutput => ({
    stage: 'pre-turn',
    pluginId,
    runtimeId: pluginId,
    outputKind,
    messageId: `result-${pluginId}`,
    text,
    attempt: 1,
    midTurnBefore: 0,
  });
  const reader = (inputs: string) => plugin('reader', `  schedule: { stage: post-turn }\n  io:\n    inputs:\n${inputs}`);
  const source = (id: string) => plugin(id, '  schedule: { stage: pre-turn }\n  outputKind: structured\n  output: { contract: facts@1 }');

  function resolve(inputs: string, outputs: RuntimeOutput[]) {
    const catalog = catalogOf({ 'a/PLUGIN.md': source('a'), 'b/PLUGIN.md': source('b'), 'reader/PLUGIN.md': reader(inputs) });
    return resolveInputSlots({ catalog, runtime: catalog.find('reader', 'reader')!, outputs });
  }

  it('keeps resultId (the output message id) and the original values', () => {
    expect(resolve('      x: { from: { runtime: a/a }, cardinality: one, select: /k }', [output('a', '{"k":{"v":1}}')])).toEqual([
      { binding: 'x', cardinality: 'one', value: { v: 1 }, source: { pluginId: 'a', runtimeId: 'a', resultId: 'result-a' } },
    ]);
  });

  it('many: no result gives no items (the declared provider as source); a result whose pointer finds nothing gives none', () => {
    expect(resolve('      x: { from: { contract: facts@1 }, cardinality: many, select: /k }', [])).toEqual([
      { binding: 'x', cardinality: 'many', items: [], source: { pluginId: 'a', runtimeId: 'a' } },
    ]);
    expect(resolve('      x: { from: { contract: facts@1 }, cardinality: many, select: /k }', [output('a', '{}'), output('b', '{"k":"v"}')])).toEqual([
      {
        binding: 'x',
        cardinality: 'many',
        items: ['v'],
        source: { pluginId: 'a', runtimeId: 'a', resultId: 'result-a' },
        sources: [
          { pluginId: 'a', runtimeId: 'a', resultId: 'result-a' },
          { pluginId: 'b', runtimeId: 'b', resultId: 'result-b' },
        ],
      },
    ]);
  });

  it.each([
    ['no result', '      x: { from: { runtime: a/a }, cardinality: one }', [], 'io.inputs.x: no result of runtime a/a in an earlier stage of this execution'],
    [
      'a pointer that finds nothing',
      '      x: { from: { runtime: a/a }, cardinality: one, select: /gone }',
      [output('a', '{}')],
      'select "/gone" finds nothing in the result of a/a',
    ],
    [
      'several results for one',
      '      x: { from: { contract: facts@1 }, cardinality: one }',
      [output('a', '1'), output('b', '2')],
      'cardinality: one, but 2 runtimes produced contract facts@1: a/a, b/b',
    ],
    [
      'a structured output that is not JSON',
      '      x: { from: { runtime: a/a }, cardinality: many }',
      [output('a', 'not json')],
      'the output of a/a is not JSON',
    ],
  ])('fails clearly on %s', (_what, inputs, outputs, message) => {
    let error: unknown;
    try {
      resolve(inputs, outputs as RuntimeOutput[]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputBindingError);
    expect((error as InputBindingError).message).toContain('plugin reader: runtime reader: ');
    expect((error as InputBindingError).message).toContain(message);
    expect((error as InputBindingError).code).toBe('RUNTIME_INPUT_UNRESOLVED');
  });
});
