import { join } from 'node:path';
import { createPluginHarness, type PluginHarness } from '..';

jest.setTimeout(60_000);

const FIXTURES = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'service-plugins');

describe('ctx.services in a turn (function runtime)', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({ plugins: [join(FIXTURES, 'tally'), join(FIXTURES, 'almanac')], world: { name: 'Anywhere', lore: 'x' } });
  });
  afterAll(() => h.close());

  it('a function runtime reads every provider of the service, in plugin id order, with the host-set providerPluginId', async () => {
    const turn = await h.turn('count');
    expect(turn.outputJson('tally', 'count')).toEqual([
      { from: 'almanac', id: 'seasons', blocks: ['seasons'] },
      { from: 'tally', id: 'tally-blocks', blocks: ['tallies'] },
    ]);
  });
});
