import { isWellFormedText } from '../../../libs/text';
import { blockOf, TRACKER, worldInitHarness } from './support';

jest.setTimeout(120_000);

const STORY = 'The snow falls on the terraces.';
const codePoints = (s: string) => Array.from(s).length;
/** A block's lines without its tags (the line saying what it is sits in a session segment, not here). */
const linesOf = (block: string) => block.split('\n').slice(1, -1);

/** A world with only dimensions (and a line of lore). */
type Dimension = { name: string; value: unknown; schema?: Record<string, unknown>; updateRule?: string };
const world = (dimensions: Record<string, Dimension>) => ({ name: 'Budget Hollow', lore: 'A hollow full of numbers.', dimensions });

describe('<world-dimensions> budget (12,000 characters, code points)', () => {
  it('every value in full when the segment fits: 10,000 emoji count as 10,000 characters, not 20,000 UTF-16 units; no rules: the tracker never calls the model', async () => {
    const h = await worldInitHarness({
      world: world({
        wings: { name: 'Wings', schema: { type: 'string' }, value: '🐉'.repeat(5_000) },
        scales: { name: 'Scales', schema: { type: 'string' }, value: '🔥'.repeat(5_000), updateRule: '   ' },
        broken: { name: 'Broken', schema: { type: 'nonsense' }, value: 1, updateRule: 'Count up.' },
      }),
      replies: { default: STORY },
    });
    try {
      const turn = await h.turn('I count the scales');
      const block = blockOf(turn.request('narrator').turnContext, 'world-dimensions');
      expect(block.length).toBeGreaterThan(20_000); // UTF-16 units
      expect(codePoints(block)).toBeLessThanOrEqual(12_000);
      const lines = linesOf(block);
      expect(lines.length).toBe(3);
      expect(lines[0]).toBe('- broken (v1): 1');
      expect(lines[1] === `- scales (v1): "${'🔥'.repeat(5_000)}"`).toBe(true);
      expect(lines[2] === `- wings (v1): "${'🐉'.repeat(5_000)}"`).toBe(true);
      // a blank rule and a schema that does not compile are no valid rules: the tracker is skipped
      expect(turn.requestsOf('world-init', 'dimension-tracker')).toEqual([]);
      expect(turn.requests.map((r) => `${r.pluginId}/${r.runtimeId}`)).toEqual(['narrator/narrator']);
      expect(turn.outputs.find((o) => o.runtimeId === 'dimension-tracker')).toMatchObject({ text: '' });
      expect(turn.eventsOf('llm.calling@1').filter((e) => e.pluginId === 'world-init')).toEqual([]);
      expect(JSON.parse(turn.output('world-init', 'publish') ?? 'null')).toEqual({ track: false });
      const again = await h.turn('I count them again');
      expect(again.requestsOf('world-init', 'dimension-tracker')).toEqual([]);
      expect(again.request('narrator').turnContext).toContain('- broken (v1): 1\n');
      expect(await h.audit()).toMatchObject({ identical: true });
    } finally {
      await h.close();
    }
  });

  it('over the budget: the longest values are cut to 240 code points with an ellipsis and marked as previews, not JSON', async () => {
    const emoji = '🐉'.repeat(7_000);
    const cjk = '龙'.repeat(5_000);
    const h = await worldInitHarness({
      world: world({
        'a-emoji': { name: 'Emoji', schema: { type: 'string' }, value: emoji },
        'b-cjk': { name: 'CJK', schema: { type: 'string' }, value: cjk },
        'c-short': { name: 'Short', schema: { type: 'object' }, value: { ok: true } },
      }),
      replies: { default: STORY },
    });
    try {
      const turn = await h.turn('I read the ledger');
      const block = blockOf(turn.request('narrator').turnContext, 'world-dimensions');
      expect(codePoints(block)).toBeLessThanOrEqual(12_000);
      expect(isWellFormedText(block)).toBe(true);
      const lines = linesOf(block);
      const preview = `"${'🐉'.repeat(239)}…`;
      expect(lines.length).toBe(4);
      expect(lines[0] === `- a-emoji (v1, preview, the first 240 characters only, not complete JSON): ${preview}`).toBe(true);
      expect(lines[1] === `- b-cjk (v1): "${cjk}"`).toBe(true); // the shorter long value stays whole
      expect(lines.slice(2)).toEqual([
        '- c-short (v1): {"ok":true}',
        'A preview is not the whole value: read it in full with world-dimension-get by id (and a JSON pointer path).',
      ]);
      expect(codePoints(preview)).toBe(241); // 240 characters and the ellipsis
      expect(() => JSON.parse(preview.slice(0, -1))).toThrow(); // a preview is not passed off as JSON
    } finally {
      await h.close();
    }
  });

  it('still over: the count of dimensions left out is stated with how to query them; the tracker’s rules are truncated and paged by dimension-rule-get', async () => {
    const dimensions = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => {
        const id = `d-${String(i).padStart(2, '0')}`;
        return [id, { name: `Dimension ${i}`, schema: { type: 'string' }, value: '雪'.repeat(400), updateRule: `Rule ${i}: ${'keep it. '.repeat(40)}` }];
      }),
    );
    const h = await worldInitHarness({
      world: world(dimensions),
      replies: {
        [TRACKER]: [
          { tool: 'dimension-rule-get', args: { offset: 0, limit: 2 } },
          { tool: 'dimension-rule-get', args: { id: 'd-59' } },
          { tool: 'update-dimensions', args: { updates: [] } },
        ],
        default: STORY,
      },
    });
    try {
      const turn = await h.turn('I look at everything');
      const block = blockOf(turn.request('narrator').turnContext, 'world-dimensions');
      expect(codePoints(block)).toBeLessThanOrEqual(12_000);
      const lines = linesOf(block);
      const listed = lines.filter((l) => l.startsWith('- d-'));
      expect(listed.length).toBeGreaterThan(10);
      expect(listed.length).toBeLessThan(60);
      // every listed value is a marked preview (all are over 240 characters), in id order
      for (const l of listed) expect(l).toMatch(/^- d-\d\d \(v1, preview, the first 240 characters only, not complete JSON\): "雪{239}…$/);
      expect(listed.map((l) => l.slice(2, 6))).toEqual(Object.keys(dimensions).slice(0, listed.length));
      const omitted = 60 - listed.length;
      expect(lines.at(-1)).toBe(
        `${omitted} more dimensions are not shown here for lack of space; not shown does not mean without a value. List them page by page with world-dimension-list and read one by id (and path) with world-dimension-get.`,
      );

      const [tracker] = turn.requestsOf('world-init', 'dimension-tracker');
      const rules = blockOf(tracker.systemPrompt, 'dimension-rules');
      expect(codePoints(rules)).toBeLessThanOrEqual(12_000);
      const shown = (rules.match(/^- id: d-\d\d$/gm) ?? []).length;
      expect(shown).toBeGreaterThan(0);
      expect(rules).toContain(
        `Truncated (${60 - shown} tracked dimensions whose rule and schema are not shown here; read them page by page with dimension-rule-get):`,
      );
      expect(rules).toContain('\n- d-59\n');
      const values = blockOf(tracker.turnContext, 'dimension-values');
      expect(codePoints(values)).toBeLessThanOrEqual(12_000);
      expect(values).not.toMatch(/\(v\d+|version\b/i);
      expect(values).toMatch(/more dimensions are not shown here/);
      const [page, one] = turn
        .eventsOf('tool.completed@1')
        .filter((e) => e.name === 'dimension-rule-get')
        .map((e) => JSON.parse(e.content));
      expect(page.data.page).toEqual({ offset: 0, total: 60, nextOffset: 2 });
      expect(page.data.rules).toContain('- id: d-00\n');
      expect(page.data.rules).toContain('- id: d-01\n');
      expect(one.data.rules).toContain('- id: d-59\n  name: Dimension 59\n  rule: Rule 59: keep it.');
    } finally {
      await h.close();
    }
  });
});
