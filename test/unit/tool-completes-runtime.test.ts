import { join } from 'node:path';
import { createPluginHarness, type HarnessTurn, type PluginHarness } from '../../libs/plugin-testing';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '..', '..');

describe('contributes.tools[].completesRuntime: a successful call ends the runtime, as runtime-done does', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: [join(ROOT, 'plugins', 'narrator'), join(ROOT, 'test', 'fixtures', 'completing-tool-plugins', 'keeper')],
      replies: {
        'keeper/keeper': [
          // turn 1: a tool that does not complete, a failed completing call, then a successful one
          { tool: 'peek-notes' },
          { tool: 'keep-note', args: { text: ' ' } },
          { tool: 'keep-note', args: { text: 'the bell rang' } },
          // turn 2: one request
          { tool: 'keep-note', args: { text: 'the river rose' } },
          'never asked for',
        ],
      },
    });
    for (const text of ['Ring the bell', 'Watch the river']) turns.push(await h.turn(text));
  });
  afterAll(() => h.close());

  it('a failed call or another tool does not end it; the successful call does, with no further request', () => {
    expect(turns.map((t) => t.status)).toEqual(['committed', 'committed']);
    expect(turns[0].requestsOf('keeper')).toHaveLength(3);
    expect(turns[1].requestsOf('keeper')).toHaveLength(1);
  });

  it('a result with a key left undefined is JSON without that key (not a "not JSON" failure)', () => {
    const [peek] = turns[0].eventsOf('tool.completed@1').filter((e) => e.name === 'peek-notes');
    expect(peek.ok).toBe(true);
    expect(JSON.parse(peek.content)).toEqual({ ok: true, data: { notes: 0 } });
  });

  it('the replay rebuilds every request byte for byte', async () => {
    expect(await h.audit()).toMatchObject({ identical: true });
  });
});
