import { valueCheck } from '../server/dimensions';

describe('valueCheck (a dimension schema)', () => {
  it('two worlds (or plugins) whose dimension schemas share an $id: each value is checked against its own schema', () => {
    const level = { $id: 'https://example.com/dimension.json', type: 'integer', minimum: 0, maximum: 10 };
    const weather = { $id: 'https://example.com/dimension.json', enum: ['rain', 'sun'] };
    const checkLevel = valueCheck(level);
    const checkWeather = valueCheck(weather);
    expect(checkLevel).not.toBeNull();
    expect(checkWeather).not.toBeNull();
    expect(checkLevel!(3)).toBeNull();
    expect(checkWeather!('rain')).toBeNull();
    expect(checkLevel!('rain')).toBe('(root): must be integer');
    expect(checkWeather!(3)).toBe('(root): must be equal to one of the allowed values: "rain", "sun"');
    expect(valueCheck(structuredClone(level))!(11)).toBe('(root): must be <= 10');
  });

  it('names the path inside the value', () => {
    const check = valueCheck({ type: 'object', properties: { guilds: { type: 'array', items: { type: 'string', minLength: 1 } } } })!;
    expect(check({ guilds: ['a', ''] })).toBe('/guilds/1: must NOT have fewer than 1 characters');
  });

  it('a schema that cannot be compiled has no check', () => {
    expect(valueCheck({ type: 'integer', minimum: 'zero' })).toBeNull();
    expect(valueCheck({ $ref: '#/$defs/missing' })).toBeNull();
  });
});
