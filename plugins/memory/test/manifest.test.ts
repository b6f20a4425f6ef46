import { join } from 'node:path';
import { loadPlugin } from '../../../libs/plugins-sdk';
import { applyEdit } from '../server/edit';

describe('memory plugin manifest', () => {
  const plugin = loadPlugin(join(__dirname, '..'));

  it('is off by default, provides its segments and block definitions, and contributes the three edit tools', () => {
    expect(plugin.manifest).toMatchObject({ id: 'memory', enabledByDefault: false });
    expect(plugin.manifest.contributes.extensions).toEqual([
      { point: 'prompt.segment@1', id: 'blocks' },
      { point: 'memory.block-definitions@1', id: 'world-blocks' },
    ]);
    expect(plugin.manifest.contributes.tools.map((t) => t.name)).toEqual(['memory-append', 'memory-replace', 'memory-clear']);
    // a successful edit ends the keeper's turn (its edits come in one reply); "nothing to keep" is runtime-done
    expect(plugin.manifest.contributes.tools.every((t) => t.completesRuntime)).toBe(true);
    expect(plugin.entry).toBe(join(__dirname, '..', 'server', 'index.ts'));
    // every parameter has a type and a description (a comma in an unquoted YAML flow value would split it into a stray key)
    for (const tool of plugin.manifest.contributes.tools) {
      const walk = (schema: Record<string, unknown>) => {
        for (const property of Object.values((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) {
          for (const key of Object.keys(property)) expect(['type', 'description', 'items', 'properties', 'required', 'additionalProperties']).toContain(key);
          if (property.items) walk(property.items as Record<string, unknown>);
          if (property.properties) walk(property);
        }
      };
      walk(tool.parameters);
    }
  });

  it('its keeper runs after the narrative with no history, the reasoning switch off and a required tool', () => {
    const [keeper] = plugin.runtimes;
    expect(keeper).toMatchObject({ id: 'keeper', fullId: 'memory/keeper', inline: false });
    expect(keeper.manifest).toMatchObject({
      type: 'agent',
      schedule: { stage: 'post-turn', trigger: 'auto' },
      outputKind: 'none',
      agent: { slot: 'fast', toolChoice: 'required', reasoning: false, history: { maxTurns: 0 }, tools: ['memory-append', 'memory-replace', 'memory-clear'] },
    });
    expect(keeper.bodies.en).toMatch(/call runtime-done alone/);
    expect(keeper.bodies.en).toMatch(/Make all of this turn's edits in one reply/);
    expect(keeper.bodies['zh-Hans']).toMatch(/只调用 runtime-done/);
    expect(keeper.bodies['zh-Hans']).toMatch(/把本回合的所有编辑放在同一次回复里/);
  });
});

describe('memory edits', () => {
  const block = { id: 'notes', label: 'Notes', limit: 12, providerPluginId: 'memory' };

  it('replace needs exactly one occurrence; a replacement text with $ patterns is taken literally', () => {
    expect(applyEdit(block, 'a-b-a', { kind: 'replace', old: 'b', new: '$&$&' })).toBe('a-$&$&-a');
    expect(() => applyEdit(block, 'a-b-a', { kind: 'replace', old: 'a', new: 'c' })).toThrow(/occurs more than once in block "notes"/);
    expect(() => applyEdit(block, 'a-b-a', { kind: 'replace', old: 'z', new: 'c' })).toThrow(/does not contain the text given as old/);
  });

  it('an append is one non-empty line; the limit counts code points, not UTF-16 units', () => {
    expect(() => applyEdit(block, '', { kind: 'append', line: 'one\ntwo' })).toThrow(/single line/);
    expect(() => applyEdit(block, '', { kind: 'append', line: '   ' })).toThrow(/empty/);
    const emoji = '🐉'.repeat(12); // 24 UTF-16 units, 12 code points
    expect(applyEdit(block, '', { kind: 'append', line: emoji })).toBe(emoji);
    expect(() => applyEdit(block, emoji, { kind: 'append', line: '火' })).toThrow(
      'block "notes" would hold 14 characters, over its limit of 12 (it holds 12 now)',
    );
  });
});
