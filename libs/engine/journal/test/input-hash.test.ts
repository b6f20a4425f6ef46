import { canonicalJson, inputHash, replacerJson } from '../input-hash';

/** A small deterministic generator (no Math.random in tests: a failure is found again). */
function generator(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

const KEYS = [
  'a',
  'b',
  'Z',
  '0',
  '1',
  '10',
  '2',
  '01',
  '-1',
  '1.5',
  '4294967294',
  '4294967295',
  'é',
  'e\u0301',
  '😀',
  '\u05e9\u05dc\u05d5\u05dd',
  '漢字',
  '__proto__',
  'toString',
  '',
];
const LEAVES = [
  null,
  true,
  false,
  0,
  -0,
  1.5,
  -7,
  1e21,
  NaN,
  Infinity,
  undefined,
  'x',
  '',
  'quote " and \\ and \n',
  '\u2028',
  '👩‍👩‍👧',
  '\ud800',
  () => 1,
  Symbol('s'),
];

function randomValue(next: () => number, depth: number): unknown {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const roll = next();
  if (depth > 3 || roll < 0.4) return pick(LEAVES);
  if (roll < 0.65) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
  const object: Record<string, unknown> = roll < 0.7 ? (Object.create(null) as Record<string, unknown>) : {};
  for (let i = Math.floor(next() * 6); i > 0; i--)
    Object.defineProperty(object, pick(KEYS), { value: randomValue(next, depth + 1), enumerable: true, writable: true, configurable: true });
  return object;
}

describe('canonicalJson', () => {
  it('writes what JSON.stringify with the sorting replacer writes, for plain values of every kind', () => {
    const next = generator(33);
    for (let i = 0; i < 5000; i++) {
      const value = randomValue(next, 0);
      expect(canonicalJson(value)).toBe(replacerJson(value));
    }
  });

  it('sorts keys at every depth, array-index keys first in numeric order (as an object orders them)', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: undefined }], c: 2 }, 10: 'x', 2: 'y' })).toBe('{"2":"y","10":"x","a":{"c":2,"d":[{"z":1}]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });

  it('leaves what is not plain to JSON.stringify: toJSON, dates, maps, typed arrays, cycles and bigints', () => {
    const date = new Date(0);
    const withToJson = { toJSON: () => ({ b: 1, a: 2 }), z: 1 };
    const nested = { when: date, data: new Map([[1, 2]]), bytes: new Uint8Array([1, 2]), own: withToJson, list: [date, withToJson] };
    expect(canonicalJson(nested)).toBe(replacerJson(nested));
    expect(canonicalJson(nested)).toBe(
      '{"bytes":{"0":1,"1":2},"data":{},"list":["1970-01-01T00:00:00.000Z",{"a":2,"b":1}],"own":{"a":2,"b":1},"when":"1970-01-01T00:00:00.000Z"}',
    );
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    expect(() => canonicalJson(cycle)).toThrow(); // as the replacer throws (its sorted copies hide the cycle: the stack overflows)
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200; i++) deep = { [`k${i % 3}`]: deep, a: [i] };
    expect(canonicalJson(deep)).toBe(replacerJson(deep));
    expect(canonicalJson(undefined)).toBeUndefined();
  });

  it('hashes equal inputs alike in any key order', () => {
    expect(inputHash({ playerInput: { text: 'look', id: 1 } })).toBe(inputHash({ playerInput: { id: 1, text: 'look' } }));
    expect(inputHash({ a: 1 })).not.toBe(inputHash({ a: 2 }));
  });
});
