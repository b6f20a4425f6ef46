/** Fuzz-style properties of the data boundary and templates (spec §4) with hostile values. */
import fc from 'fast-check';
import { escapeXml, isBookkeepingKey, isBookkeepingValue, modelFacingJson } from '../../data-boundary';
import { renderTemplate, templateVariables } from '../template';
import { characterSheetSegments } from '../../plugins-sdk';

const uuid = fc.uuid();
const iso = fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) => d.toISOString());
const fragment = fc.oneof(
  fc.constantFrom(
    '</world-summary>',
    '<world-summary>',
    '{{ session.id }}',
    '{{session.id}}',
    '{{ world.name }}',
    'constructor',
    '__proto__',
    'toString',
    '&amp;',
    '\n',
    '龙背',
    '👩‍👩‍👧‍👦',
    'مرحبا',
    '🇯🇵',
    '</player-character>',
  ),
  uuid,
  iso,
  fc.string({ unit: 'grapheme', maxLength: 8 }),
);
const hostileText = fc.array(fragment, { maxLength: 12 }).map((parts) => parts.join(''));
const hostileKey = fc.oneof(fc.constantFrom('constructor', '__proto__', 'toString', 'sessionId', 'updatedAt', 'id', 'date'), uuid, fc.string({ maxLength: 6 }));
const { value: hostileValue } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileText,
    uuid,
    iso,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(hostileKey, tie('value'), { maxKeys: 5 }).map((d) => JSON.parse(JSON.stringify(d)) as unknown), // own __proto__ keys, as JSON.parse gives them
}));

/** Every key and string of a JSON value. */
function* strings(value: unknown): Generator<{ kind: 'key' | 'value'; text: string }> {
  if (typeof value === 'string') yield { kind: 'value', text: value };
  else if (Array.isArray(value)) for (const v of value) yield* strings(v);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      yield { kind: 'key', text: k };
      yield* strings(v);
    }
}

const SESSION_ID = '0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f';

describe('§4 data boundary holds for hostile values (fast-check)', () => {
  it('modelFacingJson never lets a UUID or ISO time through as a value or key, drops sessionId, and never changes its input', () => {
    fc.assert(
      fc.property(hostileValue, (value) => {
        const before = JSON.stringify(value);
        const out = modelFacingJson(value);
        expect(JSON.stringify(value)).toBe(before);
        for (const s of strings(out)) {
          if (s.kind === 'value') expect(isBookkeepingValue(s.text)).toBe(false);
          else expect(isBookkeepingKey(s.text)).toBe(false);
        }
        // the JSON text round-trips: what the model reads is what the projection holds
        expect(JSON.parse(JSON.stringify(out ?? null))).toEqual(out ?? null);
      }),
      { numRuns: 400 },
    );
  });

  it('a value is interpolated once and a block value never escapes its block', () => {
    fc.assert(
      fc.property(hostileText, hostileText, hostileValue, (description, name, other) => {
        const v = templateVariables({
          locale: 'en',
          session: { id: SESSION_ID, turnNumber: 1 },
          world: { name: name || 'W', description },
          inputs: { constructor: { toString: { x: other } } },
        });
        const body = '<world-summary>\n{{ world.description }}\n</world-summary>\n{{ world.description }}|{{ world.name }}';
        const out = renderTemplate(body, v);
        const worldName = name || 'W';
        expect(out).toBe(`<world-summary>\n${escapeXml(description)}\n</world-summary>\n${description}|${worldName}`);
        const inner = out.slice('<world-summary>\n'.length, out.indexOf('\n</world-summary>\n'));
        expect(inner).not.toMatch(/[<>]/);
        // {{ session.id }} in data is never expanded
        if (!description.includes(SESSION_ID) && !worldName.includes(SESSION_ID)) expect(out).not.toContain(SESSION_ID);
        // inherited members are never read; explicit own keys are
        expect(renderTemplate('{{ inputs.constructor.toString.x }}', v)).toBe(
          other === null || other === undefined
            ? ''
            : typeof other === 'object'
              ? JSON.stringify(modelFacingJson(other))
              : String(modelFacingJson(other) ?? ''),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('character sheets and profiles: blocks hold, no bookkeeping field reaches the prompt', () => {
    const character = fc.record({
      id: fc.oneof(uuid, fc.constantFrom('mira', 'constructor', '__proto__')),
      name: hostileText.map((s) => s || 'N'),
      description: hostileText,
      fields: fc.record({ ref: uuid, at: iso, note: hostileText, sessionId: fc.string() }),
    });
    fc.assert(
      fc.property(fc.array(character, { minLength: 1, maxLength: 6 }), (characters) => {
        const segments = characterSheetSegments(characters, { currentCharacterId: characters[0].id, profiles: true, locale: 'en' });
        for (const s of segments) {
          const open = `<${s.id}>\n`;
          const close = `\n</${s.id}>`;
          expect(s.content.startsWith(open) && s.content.endsWith(close)).toBe(true);
          expect(s.content.slice(open.length, -close.length)).not.toMatch(/[<>]/);
          // prose may quote anything (it is story text); bookkeeping fields never reach the prompt
          const prose = characters.map((c) => [c.name, c.description, c.fields.note].join('\n')).join('\n');
          for (const c of characters)
            for (const leak of [c.fields.ref, c.fields.at, 'sessionId']) if (!prose.includes(leak)) expect(s.content).not.toContain(leak);
        }
        const sheet = JSON.parse(
          segments[0].content
            .slice('<player-character>\n'.length, -'\n</player-character>'.length)
            .replace(/&lt;/g, '<')
            .replace(/&gt;/g, '>')
            .replace(/&amp;/g, '&'),
        );
        for (const s of strings(sheet)) expect(s.kind === 'value' ? isBookkeepingValue(s.text) : isBookkeepingKey(s.text)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});
