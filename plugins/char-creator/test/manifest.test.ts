import { join } from 'node:path';
import { loadPlugin } from '../../../libs/plugins-sdk';
import { checkFields, describeType } from '../server/validate';

describe('char-creator plugin manifest', () => {
  const plugin = loadPlugin(join(__dirname, '..'));

  it('is off by default, provides its segments and the session characters, and contributes the two write tools', () => {
    expect(plugin.manifest).toMatchObject({ id: 'char-creator', enabledByDefault: false });
    expect(plugin.manifest.contributes.extensions).toEqual([
      { point: 'prompt.segment@1', id: 'characters' },
      { point: 'session.world-context@1', id: 'characters' },
    ]);
    expect(plugin.manifest.contributes.tools.map((t) => t.name)).toEqual(['create-character', 'update-character-fields']);
    // a successful update-character-fields (also "no change", updates: []) ends the tracker's turn; create-character does not
    expect(plugin.manifest.contributes.tools.map((t) => [t.name, t.completesRuntime])).toEqual([
      ['create-character', false],
      ['update-character-fields', true],
    ]);
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

  it('its character-tracker runs after the narrative with a one-turn window, the reasoning switch off and a required tool', () => {
    const [tracker] = plugin.runtimes;
    expect(tracker).toMatchObject({ id: 'character-tracker', fullId: 'char-creator/character-tracker', inline: false });
    expect(tracker.manifest).toMatchObject({
      type: 'agent',
      schedule: { stage: 'post-turn', trigger: 'auto' },
      outputKind: 'none',
      agent: { slot: 'fast', toolChoice: 'required', reasoning: false, history: { maxTurns: 1 }, tools: ['create-character', 'update-character-fields'] },
    });
    expect(tracker.bodies.en).toMatch(/call update-character-fields with\s+"updates": \[\]/);
    expect(tracker.bodies.en).toMatch(/Make all of this turn's calls in one reply/);
    expect(tracker.bodies['zh-Hans']).toMatch(/以 "updates": \[\] 调用 update-character-fields/);
    expect(tracker.bodies['zh-Hans']).toMatch(/把本回合的所有调用放在同一次回复里/);
  });
});

describe('field checks against characterSchema', () => {
  const schema = {
    type: 'object' as const,
    properties: { health: { type: 'integer', minimum: 0, maximum: 10 }, trust: { type: 'integer', minimum: -5, maximum: 5 }, status: { type: 'string' } },
  };

  it('names the field of each problem: unknown, wrong type, below / above the range', () => {
    expect(checkFields(schema, { health: 10, trust: -5, status: '🙂' }, 'fields')).toEqual({ health: 10, trust: -5, status: '🙂' });
    expect(() => checkFields(schema, { mana: 1 }, 'fields')).toThrow('fields.mana: unknown field "mana"; the fields are: health, trust, status');
    expect(() => checkFields(schema, { health: 2.5 }, 'u.fields')).toThrow('u.fields.health: 2.5 is not of type integer');
    expect(() => checkFields(schema, { trust: -6 }, 'fields')).toThrow('fields.trust: -6 is below the minimum -5 (range -5..5)');
    expect(() => checkFields(schema, { status: 3 }, 'fields')).toThrow('fields.status: 3 is not of type string');
    expect(() => checkFields(schema, [1], 'fields')).toThrow('fields: expected an object of field values');
  });

  it('describes types with their range', () => {
    expect(describeType({ type: 'integer', minimum: 0, maximum: 10 })).toBe('integer 0..10');
    expect(describeType({ type: ['number', 'null'], minimum: 1 })).toBe('number | null 1..∞');
    expect(describeType({})).toBe('any');
  });
});
