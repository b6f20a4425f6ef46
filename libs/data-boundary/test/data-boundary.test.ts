import { MAX_MODEL_FACING_DEPTH, ModelFacingJsonError, isBookkeepingValue, modelFacingJson, selfDataRow } from '..';

const UUID = '8a1c2f3e-1111-4222-8333-944445555666';
const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object') {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
};

describe('§4 data boundary: modelFacingJson', () => {
  it('drops keys whose value is a UUID or an ISO date-time, and the bookkeeping keys whatever their value', () => {
    const out = modelFacingJson({
      id: 'mira',
      ownerId: UUID,
      upper: UUID.toUpperCase(),
      nil: '00000000-0000-0000-0000-000000000000',
      at: '2026-01-02T03:04:05.123Z',
      pg: '2026-01-02 03:04:05+00',
      offset: '2026-01-02T03:04+05:30',
      basic: '20260102T030405Z',
      padded: `  ${UUID}\n`,
      sessionId: 'readable-but-bookkeeping',
      updatedAt: 7,
      createdAt: null,
      date: 'the third day of the Frost Moon',
      founded: '1492-10-12',
      time: '03:04',
      note: `met at 2026-01-02T03:04:05Z, ticket ${UUID}`,
    });
    expect(out).toEqual({
      id: 'mira',
      date: 'the third day of the Frost Moon',
      founded: '1492-10-12',
      time: '03:04',
      note: `met at 2026-01-02T03:04:05Z, ticket ${UUID}`, // prose is story text: only whole values count
    });
  });

  it('works recursively in objects and arrays; array elements that are UUIDs or date-times are dropped', () => {
    const out = modelFacingJson({ a: [{ b: { sessionId: 's', c: [UUID, 'keep', '2026-01-02T03:04:05Z', 3, { d: UUID, e: 'x' }] } }] });
    expect(out).toEqual({ a: [{ b: { c: ['keep', 3, { e: 'x' }] } }] });
  });

  it('drops a map keyed by UUIDs with its values (the key is an id)', () => {
    expect(modelFacingJson({ [UUID]: { name: 'x' }, mira: { name: 'Mira' } })).toEqual({ mira: { name: 'Mira' } });
  });

  it('never changes its input (deep-frozen input passes; the output is a new value)', () => {
    const input = deepFreeze({ a: { b: [UUID, 'k'], sessionId: 's' }, c: 'd' });
    const copy = JSON.parse(JSON.stringify(input));
    const out = modelFacingJson(input) as { a: object };
    expect(input).toEqual(copy);
    expect(out.a).not.toBe(input.a);
  });

  it('applies toJSON like JSON.stringify: a Date is an ISO time, so it is dropped; functions and undefined go', () => {
    expect(modelFacingJson({ when: new Date(0), f: () => 1, u: undefined, n: 1, list: [undefined, () => 1, 2] })).toEqual({ n: 1, list: [null, null, 2] });
  });

  it('an own __proto__ key stays a plain key and never sets the prototype', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "constructor": "c"}');
    const out = modelFacingJson(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"constructor":"c"}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('throws a clear error on a cycle, naming the path; a shared (acyclic) value is fine', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = { list: [a] };
    expect(() => modelFacingJson(a)).toThrow(ModelFacingJsonError);
    expect(() => modelFacingJson(a)).toThrow('modelFacingJson: circular reference at $.self.list[0]');
    const shared = { k: 1 };
    expect(modelFacingJson({ x: shared, y: [shared] })).toEqual({ x: { k: 1 }, y: [{ k: 1 }] });
  });

  it('throws on nesting deeper than the limit instead of overflowing the stack', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < MAX_MODEL_FACING_DEPTH + 1; i++) deep = { d: deep };
    expect(() => modelFacingJson(deep)).toThrow(/nesting deeper than 256 levels/);
    let ok: unknown = 'leaf';
    for (let i = 0; i < MAX_MODEL_FACING_DEPTH; i++) ok = [ok];
    expect(() => modelFacingJson(ok)).not.toThrow();
  });

  it('keeps Unicode text whole: emoji, ZWJ sequences, CJK, RTL, and a 1 MB string', () => {
    const texts = ['👩‍👩‍👧‍👦 family', '🇯🇵🏳️‍🌈', '龙背上的村庄', 'مرحبا بالعالم', 'שלום', 'é'.normalize('NFD'), 'x'.repeat(1 << 20)];
    const out = modelFacingJson({ texts, [texts[2]]: texts[3] }) as { texts: string[] };
    expect(out).toEqual({ texts, [texts[2]]: texts[3] });
    expect(out.texts[6].length).toBe(1 << 20);
  });

  it('a top-level UUID or date-time becomes null; scalars pass', () => {
    expect(modelFacingJson(UUID)).toBeNull();
    expect(modelFacingJson('2026-01-02T03:04:05Z')).toBeNull();
    expect(modelFacingJson('mira')).toBe('mira');
    expect(modelFacingJson(3)).toBe(3);
    expect(isBookkeepingValue(`${UUID} `)).toBe(true);
    expect(isBookkeepingValue(`${' '.repeat(100)}${UUID}`)).toBe(false); // long strings are prose
  });

  it('selfDataRow: no updatedAt, an id equal to the key is not repeated, UUIDs dropped', () => {
    expect(selfDataRow('hp', { id: 'hp', now: 3, updatedAt: '2026-01-02T03:04:05Z', by: UUID })).toBe('- hp | {"now":3}');
    expect(selfDataRow('hp', { id: 'other', now: 3 })).toBe('- hp | {"id":"other","now":3}');
  });
});
