import type { ToolContext } from '../../../libs/plugins-sdk';
import { declaredDimensions, trackedDimensions, valueCheck } from './dimensions';
import { ruleEntry } from './segments';
import { currentSnapshot, type DimensionState, STAGED, type Staged } from './state';

/** An update the model asked for. */
interface Update {
  id: string;
  value: unknown;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A value in a summary line: a string as it is, anything else as JSON, at most 60 code points. */
function shown(value: unknown): string | undefined {
  const chars = Array.from(typeof value === 'string' ? value : JSON.stringify(value));
  return chars.length <= 60 ? chars.join('') : `${chars.slice(0, 60).join('')}…`;
}

/**
 * One line for the player (the session stream's tool summary, which the play client shows after
 * the story): `Dragon's sleep 8 → 7; Season late autumn → winter`, or that nothing changed.
 */
function changeSummary(
  changed: readonly string[],
  before: Record<string, DimensionState>,
  after: Record<string, DimensionState>,
  ctx: ToolContext,
): string | undefined {
  if (changed.length === 0) return undefined; // nothing changed: nothing to tell the player
  const names = new Map(declaredDimensions(ctx.world).map(([id, d]) => [id, d.name]));
  return changed.map((id) => `${names.get(id) ?? id} ${shown(before[id]?.value)} → ${shown(after[id].value)}`).join('; ');
}

/** Why an update is refused (naming the dimension), or null. */
function refusal(update: Update, ctx: ToolContext): string | null {
  const all = new Map(declaredDimensions(ctx.world));
  const tracked = new Map(trackedDimensions(ctx.world));
  const d = all.get(update.id);
  if (!d) return `dimension "${update.id}": no such dimension (tracked dimensions: ${[...tracked.keys()].join(', ') || 'none'})`;
  if (!tracked.has(update.id)) return `dimension "${update.id}" has no update rule: it is constant and cannot be changed`;
  const problem = valueCheck(d.schema)?.(update.value) ?? null;
  return problem === null ? null : `dimension "${update.id}": ${JSON.stringify(update.value)} does not match its schema (${problem})`;
}

/**
 * `update-dimensions({ updates })`: this turn's changes, checked against each dimension's schema
 * first — one bad update refuses the call (a tool error naming the dimension) and nothing is
 * written. Accepted, the state for the next turn is staged under this turn's id: Sₙ with the
 * changes (a changed value gets version + 1). An empty `updates` stages Sₙ unchanged. A second
 * call in the same turn builds on the first. The next turn's pre-turn stage publishes the state of
 * the turn its history holds (`ctx.session.previousTurnId`), so nothing this turn reads changes,
 * and a replaced, unselected or failed turn's writes are never read.
 */
export async function updateDimensions(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  const updates = (args.updates as Update[] | undefined) ?? [];
  const seen = new Set<string>();
  for (const u of updates) {
    if (seen.has(u.id)) throw new Error(`dimension "${u.id}": updated twice in one call`);
    seen.add(u.id);
    const why = refusal(u, ctx);
    if (why) throw new Error(`${why}; nothing was written`);
  }
  const turnId = ctx.session.turnId;
  if (turnId === undefined) throw new Error('no turn is running (ctx.session.turnId is missing)');
  const published = await currentSnapshot(ctx.pluginData, ctx.world, ctx.session);
  // a second call of the same turn builds on the first; another turn's writes live under its own id
  const earlier = (await ctx.pluginData.get(STAGED, turnId)) as Staged | null;
  const base = earlier?.dimensions ?? published.dimensions;
  const next: Record<string, DimensionState> = { ...base };
  for (const u of updates) {
    const before = published.dimensions[u.id];
    next[u.id] = sameJson(before.value, u.value) ? before : { value: u.value, version: before.version + 1 };
  }
  const staged: Staged = { turnNumber: ctx.session.turnNumber, dimensions: next };
  await ctx.pluginData.set(STAGED, turnId, staged);
  const changed = Object.keys(next)
    .filter((id) => !sameJson(next[id].value, published.dimensions[id]?.value))
    .sort();
  return {
    changed,
    summary: changeSummary(changed, published.dimensions, next, ctx),
    note: 'Recorded for the next turn; the values of this turn stay as they are.',
  };
}

const DEFAULT_RULE_PAGE = 10;

/** `dimension-rule-get({ id?, offset?, limit? })`: the rule and schema of one tracked dimension, or a page of them by id. */
export function dimensionRuleGet(args: Record<string, unknown>, ctx: ToolContext): unknown {
  const tracked = trackedDimensions(ctx.world);
  if (typeof args.id === 'string') {
    const found = tracked.find(([id]) => id === args.id);
    if (!found) throw new Error(`dimension "${args.id}": no tracked dimension with this id (tracked: ${tracked.map(([id]) => id).join(', ') || 'none'})`);
    return { rules: ruleEntry(found[0], found[1], ctx.locale, ctx.sdk) };
  }
  const offset = typeof args.offset === 'number' ? args.offset : 0;
  const end = Math.min(tracked.length, offset + (typeof args.limit === 'number' ? args.limit : DEFAULT_RULE_PAGE));
  return {
    rules: tracked
      .slice(offset, end)
      .map(([id, d]) => ruleEntry(id, d, ctx.locale, ctx.sdk))
      .join('\n'),
    page: { offset, total: tracked.length, ...(end < tracked.length ? { nextOffset: end } : {}) },
  };
}
