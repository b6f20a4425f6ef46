import type { ExtensionSegment, RuntimeView, Volatility } from './types';

/** Spec §2: where a segment goes, from its position, volatility and role. */
export type Placement =
  | 'system-prompt' // stable/session, in the segments section
  | 'system-prompt-turn' // pre-history system-role turn segment: after the last cache boundary
  | 'turn-context'
  | 'pre-history-messages'
  | 'post-history'
  | 'depth';

export function placementOf(segment: ExtensionSegment): Placement {
  const { position, volatility, role } = segment;
  if (typeof position === 'object') return 'depth';
  if (position === 'post-history') return 'post-history';
  if (position === 'system') return volatility === 'turn' ? 'turn-context' : 'system-prompt';
  // pre-history
  if (role !== 'system') return 'pre-history-messages';
  return volatility === 'turn' ? 'system-prompt-turn' : 'system-prompt';
}

/**
 * Audience filter: `self` (the providing plugin), `story` (story runtimes), `{ contract }`. The
 * same for a segment and for an export (`io.exports.<name>.to`, its plugin the provider).
 */
export function matchesAudience(
  segment: Pick<ExtensionSegment, 'audience' | 'providerPluginId'>,
  runtime: Pick<RuntimeView, 'pluginId' | 'outputKind' | 'contract'>,
): boolean {
  const a = segment.audience;
  if (a === undefined) return true;
  if (a === 'self') return segment.providerPluginId === runtime.pluginId;
  if (a === 'story') return runtime.outputKind === 'story';
  return runtime.contract === a.contract;
}

const VOLATILITY_RANK: Record<Volatility, number> = { stable: 0, session: 1, turn: 2 };

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Sort by volatility (stable, session, turn), order, provider plugin id, segment id. */
export function compareSegments(a: ExtensionSegment, b: ExtensionSegment): number {
  return VOLATILITY_RANK[a.volatility] - VOLATILITY_RANK[b.volatility] || a.order - b.order || cmp(a.providerPluginId, b.providerPluginId) || cmp(a.id, b.id);
}

export type PlacedSegments = Record<Placement, ExtensionSegment[]>;

/** Filters by audience, sorts, and groups the segments by placement. */
export function placeSegments(segments: readonly ExtensionSegment[], runtime: RuntimeView): PlacedSegments {
  const placed: PlacedSegments = {
    'system-prompt': [],
    'system-prompt-turn': [],
    'turn-context': [],
    'pre-history-messages': [],
    'post-history': [],
    depth: [],
  };
  for (const s of segments.filter((s) => matchesAudience(s, runtime)).sort(compareSegments)) placed[placementOf(s)].push(s);
  return placed;
}
