import { validateOutput } from '../output-validation';

/** Two plugins' runtimes, each with an `output.schema`, written independently: both name their schema `$id: output`. */
const facts = { $id: 'output', type: 'object', required: ['facts'], properties: { facts: { type: 'array', items: { type: 'string' } } } };
const mood = { $id: 'output', type: 'object', required: ['mood'], properties: { mood: { enum: ['calm', 'angry'] } } };

describe('validateOutput (the output schema gate)', () => {
  it('two plugins whose output schemas share an $id: each reply is checked against its own schema', () => {
    expect(validateOutput('{"facts":["a"]}', facts)).toEqual({ ok: true, json: '{"facts":["a"]}' });
    expect(validateOutput('{"mood":"calm"}', mood)).toEqual({ ok: true, json: '{"mood":"calm"}' });
    // each schema keeps its own rule, in either order, again and again
    expect(validateOutput('{"mood":"calm"}', facts)).toMatchObject({ ok: false, notJson: false });
    expect(validateOutput('{"facts":["a"]}', mood)).toMatchObject({ ok: false, notJson: false });
    // a third object with the same $id and the same content as the first (a world re-read) is fine too
    expect(validateOutput('{"facts":[]}', structuredClone(facts))).toEqual({ ok: true, json: '{"facts":[]}' });
  });

  it('names where the reply is wrong (a JSON pointer, (root) for the whole value)', () => {
    expect(validateOutput('{"facts":["a", 3]}', facts)).toEqual({ ok: false, notJson: false, problems: '/facts/1: must be string' });
    expect(validateOutput('{"mood":"sad"}', mood)).toEqual({
      ok: false,
      notJson: false,
      problems: '/mood: must be equal to one of the allowed values: "calm", "angry"',
    });
    expect(validateOutput('[]', facts)).toEqual({ ok: false, notJson: false, problems: '(root): must be object' });
    expect(validateOutput('```json\n{}\n```', facts)).toEqual({ ok: false, notJson: false, problems: "(root): must have required property 'facts'" });
    expect(validateOutput('facts: none', facts)).toEqual({ ok: false, notJson: true, problems: 'not JSON' });
  });

  it('reads the schema as JSON Schema 2020-12 (the providers’ dialect): prefixItems, $defs, unevaluatedProperties', () => {
    const schema = {
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { $ref: '#/$defs/n' }], items: false } },
      unevaluatedProperties: false,
      $defs: { n: { type: 'integer' } },
    };
    expect(validateOutput('{"pair":["a",1]}', schema)).toEqual({ ok: true, json: '{"pair":["a",1]}' });
    expect(validateOutput('{"pair":["a","b"]}', schema)).toEqual({ ok: false, notJson: false, problems: '/pair/1: must be integer' });
    expect(validateOutput('{"pair":["a",1,2]}', schema)).toMatchObject({ ok: false, problems: '/pair: must NOT have more than 2 items' });
    expect(validateOutput('{"pair":["a",1],"x":1}', schema)).toMatchObject({ ok: false, problems: '(root): must NOT have unevaluated properties (x)' });
  });
});
