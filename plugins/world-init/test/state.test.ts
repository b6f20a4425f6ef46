import type { PluginDataReader, WorldView } from '../../../libs/plugins-sdk';
import { currentSnapshot, PUBLISHED, STAGED, turnKey } from '../server/state';

const world = {
  dimensions: {
    sleep: { name: 'Sleep', schema: { type: 'integer' }, value: 8, version: 1, updateRule: 'Lower it on a tremor.' },
    road: { name: 'Road', schema: { type: 'string' }, value: 'open', version: 3 },
  },
} as unknown as WorldView;

function reader(rows: Record<string, unknown>): PluginDataReader {
  return { get: async (ns: string, key: string) => rows[`${ns}/${key}`] ?? null, list: async () => [] } as unknown as PluginDataReader;
}

const s7 = { dimensions: { sleep: { value: 7, version: 2 }, road: { value: 'open', version: 3 } } };
const s6 = { turnNumber: 2, dimensions: { sleep: { value: 6, version: 3 }, road: { value: 'open', version: 3 } } };

describe('Sₙ (currentSnapshot)', () => {
  it('the first turn reads the world’s declared values and versions', async () => {
    expect(await currentSnapshot(reader({}), world, { turnNumber: 1 })).toEqual({
      dimensions: { road: { value: 'open', version: 3 }, sleep: { value: 8, version: 1 } },
    });
  });

  it('a published artifact wins; else the state the previous turn (as the history has it) staged; else the previous published one', async () => {
    const rows = { [`${PUBLISHED}/${turnKey(2)}`]: s7, [`${STAGED}/turn-b`]: s6 };
    expect(await currentSnapshot(reader(rows), world, { turnNumber: 2, previousTurnId: 'turn-a' })).toEqual(s7);
    expect((await currentSnapshot(reader(rows), world, { turnNumber: 3, previousTurnId: 'turn-b' })).dimensions.sleep).toEqual({ value: 6, version: 3 });
    // another alternative of turn 2 (not the one the history holds) wrote nothing this turn reads
    expect((await currentSnapshot(reader(rows), world, { turnNumber: 3, previousTurnId: 'turn-c' })).dimensions.sleep).toEqual({ value: 7, version: 2 });
  });

  it('looks back past turn numbers this plugin did not run in (activations), not to the world’s initial values', async () => {
    const snapshot = await currentSnapshot(reader({ [`${PUBLISHED}/${turnKey(3)}`]: { dimensions: { sleep: { value: 6, version: 3 } } } }), world, {
      turnNumber: 6,
    });
    // a dimension the stored state lacks reads the world's declaration; one the world no longer declares is dropped
    expect(snapshot).toEqual({ dimensions: { road: { value: 'open', version: 3 }, sleep: { value: 6, version: 3 } } });
  });
});
