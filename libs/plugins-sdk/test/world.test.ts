import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorld, PluginManifestError } from '..';
import { renderTemplate, templateVariables } from '../../context';

const ROOT = join(__dirname, '..', '..', '..');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function worldFile(frontMatter: string, body = 'Lore.'): string {
  const dir = mkdtempSync(join(tmpdir(), 'covel-world-'));
  dirs.push(dir);
  const file = join(dir, 'WORLD.md');
  writeFileSync(file, `---\n${frontMatter}\n---\n${body}`);
  return file;
}

const FULL = `id: harbor
name: Harbor
description: A port.
tags: [sea, 港口]
schema:
  type: object
  properties: { district: { type: string } }
entries:
  - { id: docks, district: lower }
dimensions:
  reputation: { name: Reputation, description: How the town sees you, schema: { type: integer }, value: 7, version: 2 }
  weather: { name: Weather, value: { sky: grey } }
characterSchema:
  properties:
    might: { type: integer, minimum: 0, maximum: 5, description: Strength }
    title: { type: string }
characters:
  - { id: ash, name: Ash, type: player, aliases: [Courier], description: A courier., fields: { might: 2, title: Runner } }
  - { id: mira, name: Mira, fields: { might: 5 } }
seats:
  - { id: main, characterId: ash, primary: true }
  - { id: guest }`;

describe('the world model (spec §4)', () => {
  it('loads tags, schema, entries, dimensions, characterSchema, characters with fields, seats', () => {
    const world = loadWorld(worldFile(FULL));
    expect(world.tags).toEqual(['sea', '港口']);
    expect(world.schema).toEqual({ type: 'object', properties: { district: { type: 'string' } } });
    expect(world.entries).toEqual([{ id: 'docks', district: 'lower' }]);
    expect(world.dimensions.reputation).toEqual({
      name: 'Reputation',
      description: 'How the town sees you',
      schema: { type: 'integer' },
      value: 7,
      version: 2,
    });
    expect(world.dimensions.weather).toEqual({ name: 'Weather', schema: {}, value: { sky: 'grey' }, version: 1 });
    expect(world.characterSchema.properties.might).toEqual({ type: 'integer', minimum: 0, maximum: 5, description: 'Strength' });
    expect(world.characters[1]).toEqual({ id: 'mira', name: 'Mira', aliases: [], type: 'npc', description: '', fields: { might: 5 } });
    expect(world.seats).toEqual([
      { id: 'main', characterId: 'ash', primary: true },
      { id: 'guest', primary: false },
    ]);
  });

  it('{{ world.dimensions.reputation.value }} and player.character work from a loaded world', () => {
    const world = loadWorld(worldFile(FULL));
    const v = templateVariables({ locale: 'en', session: { id: 's', turnNumber: 1 }, world });
    expect(renderTemplate('{{ world.dimensions.reputation.value }} {{ player.character.fields.might }} {{ characters.npcs }}', v)).toBe(
      '7 2/5 Mira [npc] |  | {"might":"5/5"}',
    );
  });

  it('a world without the newer fields loads with them defaulted', () => {
    const world = loadWorld(join(ROOT, 'test', 'fixtures', 'scan-worlds', 'quillhold', 'WORLD.md'));
    expect(world.seats).toEqual([]);
    expect(world.dimensions).toEqual({});
    expect(world.pluginConfig).toEqual({});
    expect(world.plugins).toBeUndefined();
    expect(world.characters.every((c) => typeof c.fields === 'object' && c.blueprint === undefined)).toBe(true);
  });

  it('Emberback declares characters with blueprints and ranged fields, a primary seat, dimensions with and without update rules', () => {
    const world = loadWorld(join(ROOT, 'worlds', 'emberback', 'WORLD.md'));
    expect(world.seats.filter((s) => s.primary).map((s) => s.characterId)).toEqual(['ash']);
    expect(world.characters.filter((c) => c.blueprint).map((c) => c.id)).toEqual(['mira', 'tomas']);
    expect(world.characterSchema.properties.health).toMatchObject({ minimum: 0, maximum: 10 });
    expect(Object.entries(world.dimensions).map(([id, d]) => [id, d.updateRule !== undefined])).toEqual([
      ['dragon-sleep', true],
      ['season', true],
      ['caravan-road', false],
      ['village-mood', true],
    ]);
    // the character biographies live in the character records, never in the lore (spec §4)
    expect(world.lorebook.map((e) => e.id)).not.toEqual(expect.arrayContaining(['mira', 'tomas', 'ash']));
  });

  it.each([
    ['a blueprint with an unknown field', 'characters:\n  - { id: c, name: C, blueprint: { mood: x } }', 'characters.0.blueprint.mood: unknown key'],
    ['a dimension update rule that is empty', 'dimensions:\n  rep: { name: R, value: 1, updateRule: "" }', 'dimensions.rep.updateRule'],
    ['a plugin id that is not an id', 'plugins: [Narrator]', 'plugins.0'],
  ])('refuses %s, naming the field', (_name, yaml, path) => {
    const dir = mkdtempSync(join(tmpdir(), 'world-'));
    const file = join(dir, 'WORLD.md');
    writeFileSync(file, `---\nid: w\nname: W\n${yaml}\n---\nlore\n`);
    expect(() => loadWorld(file)).toThrow(path);
  });

  it.each([
    ['an unknown dimension key', 'dimensions:\n  rep: { name: R, value: 1, extra: 2 }', 'dimensions.rep.extra: unknown key'],
    ['a dimension without a value', 'dimensions:\n  rep: { name: R }', 'dimensions.rep.value: value is required'],
    ['an unknown seat key', 'seats:\n  - { id: s, chair: 1 }', 'seats.0.chair: unknown key'],
    ['a seat for a missing character', 'seats:\n  - { id: s, characterId: ghost }', 'seats.0.characterId: no character "ghost"'],
    ['two primary seats', 'seats:\n  - { id: a, primary: true }\n  - { id: b, primary: true }', 'seats: more than one primary seat'],
    ['a duplicate seat id', 'seats:\n  - { id: a }\n  - { id: a }', 'seats.1.id: duplicate seat id "a"'],
    ['a duplicate character id', 'characters:\n  - { id: a, name: A }\n  - { id: a, name: B }', 'characters.1.id: duplicate character id "a"'],
    [
      'an inverted range',
      'characterSchema:\n  properties:\n    might: { minimum: 5, maximum: 1 }',
      'characterSchema.properties.might.minimum: minimum is greater than maximum',
    ],
    ['an unknown characterSchema key', 'characterSchema:\n  propertys: {}', 'characterSchema.propertys: unknown key'],
    [
      'a field outside its range',
      'characterSchema:\n  properties:\n    might: { minimum: 0, maximum: 5 }\ncharacters:\n  - { id: a, name: A, fields: { might: 6 } }',
      'characters.0.fields.might: outside 0..5',
    ],
    [
      'a ranged field that is not a number',
      'characterSchema:\n  properties:\n    might: { minimum: 0, maximum: 5 }\ncharacters:\n  - { id: a, name: A, fields: { might: strong } }',
      'characters.0.fields.might: expected a number',
    ],
    ['a schema that is not an object', 'schema: [1]', 'schema:'],
    ['entries that are not objects', 'entries: [1]', 'entries.0:'],
  ])('%s is an error naming the file and the path', (_name, extra, expected) => {
    const file = worldFile(`id: w\nname: W\n${extra}`);
    expect(() => loadWorld(file)).toThrow(PluginManifestError);
    expect(() => loadWorld(file)).toThrow(`${file}: ${expected}`);
  });
});
