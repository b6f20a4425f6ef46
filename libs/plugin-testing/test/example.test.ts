import { join } from 'node:path';
import { createPluginHarness, type PluginHarness } from '..';

// The worked example of libs/plugins-sdk/README.md ("Testing a plugin"): keep the two in step.
const FIXTURES = join(__dirname, '..', '..', '..', 'test', 'fixtures');

jest.setTimeout(60_000);

describe('weather-watch (contract)', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: [join(FIXTURES, 'harness-example-plugin')],
      world: join(FIXTURES, 'harness-example-world'),
      locale: 'en',
      replies: {
        // one reply for every call: the forecaster has an output schema, prose would fail its schema gate
        'weather-watch/forecast': { json: { sky: 'rain' } },
        default: 'The rain drums on the harbour roofs as you step outside.',
      },
    });
  });
  afterAll(() => h.close());

  it('puts the current weather into the story runtime turn context, from this plugin', async () => {
    const turn = await h.turn('I walk out into the storm');

    const request = turn.request('weather-watch', 'storyteller');
    expect(request.turnContext).toContain('<weather>Over Harbour Town: rain (turn 1).</weather>');
    expect(request.segmentsOf('weather-watch').map((s) => [s.id, s.placement])).toEqual([
      ['weather-style', 'system-prompt'],
      ['weather', 'turn-context'],
    ]);
    expect(request.section('runtime-body')).toContain('You tell an interactive story.');
    expect(request.section('segments')).toContain('Mention the weather whenever the player is outdoors.');
    expect(request.messages.at(-1)).toMatchObject({ role: 'user', section: 'player-input', content: 'I walk out into the storm' });

    // the forecaster's scripted reply is its output; the story is the default reply, committed
    expect(turn.outputJson('weather-watch', 'forecast')).toEqual({ sky: 'rain' });
    expect(turn.story).toBe('The rain drums on the harbour roofs as you step outside.');

    // every request rebuilds from the log byte for byte, without running the handler again
    expect(await h.audit()).toMatchObject({ identical: true });
  });

  it('counts the turns', async () => {
    const turn = await h.turn('I look at the sky');
    expect(turn.request('weather-watch', 'forecast').turnContext).toContain('clear (turn 2)');
  });
});
