import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseWorldFile, WorldDocument } from '../../../plugins-sdk';
import { worldMarkdown } from '..';
import { expectSameDocument, worldDocument } from './world-arbitrary';

const EMBERBACK = join(__dirname, '..', '..', '..', '..', 'worlds', 'emberback', 'WORLD.md');

describe('worldMarkdown: a world document as a WORLD.md', () => {
  it('reads back through the file loader as the same document, for generated documents with hostile text (property)', () => {
    fc.assert(
      fc.property(worldDocument, fc.boolean(), (document, withId) => {
        const text = worldMarkdown(document, withId ? { id: 'harbor-2' } : {});
        const back = parseWorldFile(text, 'WORLD.md', 'folder-id');
        expect(back.id).toBe(withId ? 'harbor-2' : 'folder-id');
        expectSameDocument(back.document, document);
        // written again: the same text
        expect(worldMarkdown(back.document, withId ? { id: 'harbor-2' } : {})).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('the emberback WORLD.md reads back as the same document, id included', () => {
    const { id, document } = parseWorldFile(readFileSync(EMBERBACK, 'utf8'), EMBERBACK);
    const text = worldMarkdown(document, { id });
    expect(text.startsWith('---\nid: emberback\nname: Emberback\ndescription: A village built on the back of a sleeping dragon')).toBe(true);
    expect(parseWorldFile(text, 'WORLD.md')).toStrictEqual({ id: 'emberback', document });
    expect(text).toContain('\n---\n\nEmberback is a village of three terraces');
  });

  it('keeps the YAML pitfalls as data: look-alike scalars, spaces, line breaks, fences, odd keys, numbers, empty collections', () => {
    const tricky = ['yes', 'No', 'null', '~', '1e3', '-0', '0x1F', '.inf', '2001-12-14', '  leading', 'trailing  ', 'two\nlines', 'ends\n\n', ' \n ', '\r\n'];
    // what the `yaml` package alone gets wrong: a line of only spaces in a literal block, an escaped space in a long double-quoted string
    tricky.push(' \n', 'x\n \ny', '%YAML\r\n \n<!-- narrator-only --> and more words past forty characters');
    const document = WorldDocument.parse({
      name: '---',
      description: '--- not a fence\n---\nstill the description\n...',
      tags: tricky,
      schema: { 'a: b': { '#': [], '': {} }, '---': '---', '<<': { merged: false }, '? x': null, 'multi\nline key': 1 },
      entries: [{ one: 1.0, negativeZero: -0, big: 2 ** 64, huge: 1e21, tiny: 1.5e-7, unsafe: 2 ** 53 + 2, nan: NaN, inf: -Infinity, t: true }],
      characters: [{ id: 'a', name: '龍背 مرحبا 👨‍👩‍👧', description: '{{ world.name }} </world-lore>', fields: { constructor: 'c', toString: 1 } }],
      openings: ['<!-- narrator-only -->', '\tTabbed'],
      extensions: {
        card: { data: { alternate_greetings: [], extensions: {} } },
        long: 'x '.repeat(200),
        own: JSON.parse('{"__proto__": {"x": 1}}'),
        last: 'the front matter ends with empty lines\n\n',
      },
      lore: 'Lore.\n---\n</world-lore> {{ player.name }}\n<!-- narrator-only -->\nSecret.\n<!-- /narrator-only -->',
    });
    const text = worldMarkdown(document);
    expectSameDocument(parseWorldFile(text, 'WORLD.md', 'x').document, document);
    // the `---` lines are the two fences and the lore's: the ones in strings cannot end the front matter early
    expect(text.split('\n').filter((line) => line === '---')).toHaveLength(3);
    expect(text).toContain('\n---\n\nLore.\n---\n</world-lore>');
  });

  it('leaves out what the schema fills in, and orders the fields for people', () => {
    const document = WorldDocument.parse({
      lorebook: [{ id: 'bell', keys: ['bell'], content: 'Three rings: a tremor.' }],
      characters: [{ id: 'ash', name: 'Ash' }],
      seats: [{ id: 'main', characterId: 'ash' }],
      dimensions: { mood: { name: 'Mood', value: 'calm' } },
      tags: ['dragon'],
      name: 'Emberback',
      plugins: [],
    });
    expect(worldMarkdown(document, { id: 'emberback' })).toBe(
      [
        '---',
        'id: emberback',
        'name: Emberback',
        'tags:',
        '  - dragon',
        'plugins: []',
        'characters:',
        '  - id: ash',
        '    name: Ash',
        'seats:',
        '  - id: main',
        '    characterId: ash',
        'dimensions:',
        '  mood:',
        '    name: Mood',
        '    value: calm',
        'lorebook:',
        '  - id: bell',
        '    keys:',
        '      - bell',
        '    content: "Three rings: a tremor."',
        '---',
        '',
      ].join('\n'),
    );
  });

  it('a lore with spaces around it or \\r\\n line breaks is normalised by the schema as the loader reads a body, so it reads back the same', () => {
    const document = WorldDocument.parse({ name: 'W', lore: '\r\n  \n  Indented first line.\r\nSecond.\rThird.\n\n\t' });
    expect(document.lore).toBe('Indented first line.\nSecond.\nThird.');
    expect(parseWorldFile(worldMarkdown(document), 'WORLD.md', 'w').document).toStrictEqual(document);
    // a WORLD.md checked out with \r\n line endings is the same document as with \n
    const lf = worldMarkdown(
      WorldDocument.parse({ name: 'W', description: 'two\nlines', lore: 'One.\n<!-- narrator-only -->\nTwo.\n<!-- /narrator-only -->' }),
    );
    expect(parseWorldFile(lf.replace(/\n/g, '\r\n'), 'WORLD.md', 'w')).toStrictEqual(parseWorldFile(lf, 'WORLD.md', 'w'));
  });

  it('refuses an id that is not a world id (a caller bug)', () => {
    expect(() => worldMarkdown(WorldDocument.parse({ name: 'W' }), { id: '../x' })).toThrow(expect.objectContaining({ code: 'INVALID_WORLD_ID' }));
  });
});
