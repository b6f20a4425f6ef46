import { createSchemaChecker } from '..';

describe('createSchemaChecker (ajv 8, JSON Schema 2020-12)', () => {
  it('two plugins whose schemas share an $id: each value is checked against its own schema, nested $ids too', () => {
    const checker = createSchemaChecker();
    const a = { $id: 'https://example.com/payload.json', type: 'object', required: ['a'], properties: { n: { $id: 'n.json', type: 'integer' } } };
    const b = { $id: 'https://example.com/payload.json', type: 'object', required: ['b'], properties: { n: { $id: 'n.json', type: 'string' } } };
    expect(checker.problem(a)).toBeNull();
    expect(checker.problem(b)).toBeNull();
    expect(checker.check(a, { a: 1, n: 1 })).toEqual({ ok: true });
    expect(checker.check(b, { b: 1, n: 'x' })).toEqual({ ok: true });
    expect(checker.check(a, { b: 1, n: 'x' })).toEqual({ ok: false, messages: ["(root): must have required property 'a'", '/n: must be integer'] });
    expect(checker.check(b, { a: 1, n: 1 })).toEqual({ ok: false, messages: ["(root): must have required property 'b'", '/n: must be string'] });
    // a schema never reaches another plugin's by its $id
    expect(checker.problem({ $ref: 'https://example.com/payload.json' })).toMatch(/can't resolve reference/);
  });

  it('a schema refers to its own $defs and to itself by $id (recursion)', () => {
    const checker = createSchemaChecker();
    const tree = {
      $id: 'https://example.com/tree.json',
      type: 'object',
      properties: { kids: { type: 'array', items: { $ref: 'https://example.com/tree.json' } }, name: { $ref: '#/$defs/name' } },
      $defs: { name: { type: 'string' } },
    };
    expect(checker.check(tree, { name: 'a', kids: [{ name: 'b', kids: [] }] })).toEqual({ ok: true });
    expect(checker.check(tree, { kids: [{ kids: [{ name: 3 }] }] })).toEqual({ ok: false, messages: ['/kids/0/kids/0/name: must be string'] });
  });

  it('reads 2020-12 keywords, and a schema that declares draft-07 as draft-07', () => {
    const checker = createSchemaChecker();
    const tuple2020 = { type: 'array', prefixItems: [{ type: 'string' }], items: false };
    expect(checker.check(tuple2020, ['a'])).toEqual({ ok: true });
    expect(checker.check(tuple2020, ['a', 'b'])).toEqual({ ok: false, messages: ['(root): must NOT have more than 1 items'] });
    expect(checker.check({ type: 'object', dependentRequired: { a: ['b'] } }, { a: 1 })).toEqual({
      ok: false,
      messages: ['(root): must have property b when property a is present'],
    });
    const tuple07 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }], additionalItems: false };
    expect(checker.check(tuple07, ['a'])).toEqual({ ok: true });
    expect(checker.check(tuple07, ['a', 'b'])).toEqual({ ok: false, messages: ['(root): must NOT have more than 1 items'] });
  });

  it('ignores keys that are no keyword (x-…) and treats format as an annotation', () => {
    const checker = createSchemaChecker();
    const schema = {
      type: 'object',
      'x-ui': { widget: 'slider' },
      properties: { at: { type: 'string', format: 'date-time' }, mail: { type: 'string', format: 'no-such-format' } },
    };
    expect(checker.problem(schema)).toBeNull();
    expect(checker.check(schema, { at: 'not a date', mail: 'x' })).toEqual({ ok: true });
  });

  it('a schema it cannot read: the compile error, as a failed check', () => {
    const checker = createSchemaChecker();
    for (const schema of [{ $ref: '#/$defs/missing' }, { type: 'string', minLength: 'two' }, { $schema: 'https://example.com/my-dialect' }]) {
      expect(checker.problem(schema)).toEqual(expect.any(String));
      expect(checker.check(schema, 'x')).toEqual({ ok: false, messages: [expect.stringMatching(/^the schema cannot be read: /)] });
    }
  });

  it('names the member an additionalProperties or unevaluatedProperties refuses, and the allowed values of an enum', () => {
    const checker = createSchemaChecker();
    expect(checker.check({ type: 'object', properties: { a: {} }, additionalProperties: false }, { a: 1, colour: 2 })).toEqual({
      ok: false,
      messages: ['(root): must NOT have additional properties (colour)'],
    });
    expect(checker.check({ allOf: [{ properties: { a: {} } }], unevaluatedProperties: false }, { a: 1, b: 2 })).toEqual({
      ok: false,
      messages: ['(root): must NOT have unevaluated properties (b)'],
    });
    expect(checker.check({ properties: { tone: { enum: ['dry', 'warm'] } } }, { tone: '乾' })).toEqual({
      ok: false,
      messages: ['/tone: must be equal to one of the allowed values: "dry", "warm"'],
    });
  });

  it('counts string lengths in code points (an emoji is one character)', () => {
    const checker = createSchemaChecker();
    expect(checker.check({ type: 'string', maxLength: 2 }, '🐉龍')).toEqual({ ok: true });
    expect(checker.check({ type: 'string', maxLength: 2 }, '🐉龍x')).toEqual({ ok: false, messages: ['(root): must NOT have more than 2 characters'] });
  });
});
