import type { CompactResult } from '../plugins-sdk';
import type { CompactionLimits } from './compaction-limits';
import { estimateTokens } from '../text';

/** A saved summary as validation needs it, oldest first. */
export interface StoredSummary {
  readonly summaryId: string;
  readonly content: string;
}

export interface CompactionValidationInput {
  /**
   * The session's stored uncompacted messages from the oldest on, in story order (a bounded read:
   * as many as the provider was shown is enough; an id beyond it is rejected as foreign).
   */
  readonly uncompactedPrefix: readonly string[];
  /** The session's saved summaries, oldest first. */
  readonly summaries: readonly StoredSummary[];
  /** What the `history.compact@2` provider returned (already parsed by its schema). */
  readonly result: CompactResult;
  readonly limits: CompactionLimits;
  /** A fresh id for each segment of new messages (a merge keeps the id of the oldest segment it replaces). */
  readonly newSummaryId: () => string;
}

/** `segment` is the index of the provider's segment the problem was found in. */
export type CompactionProblem =
  | { readonly kind: 'empty-segment'; readonly segment: number }
  | { readonly kind: 'mixed-segment'; readonly segment: number }
  | { readonly kind: MessageProblemKind; readonly segment: number; readonly messageId: string }
  | { readonly kind: SummaryProblemKind; readonly segment: number; readonly summaryId: string }
  | { readonly kind: 'segment-too-long'; readonly segment: number; readonly tokens: number; readonly limit: number }
  | { readonly kind: 'total-too-long'; readonly tokens: number; readonly limit: number }
  | { readonly kind: 'too-many-segments'; readonly count: number; readonly limit: number };

/**
 * foreign: not an uncompacted message of this session (another session's, already compacted, or
 * beyond the read prefix); duplicate: named twice; skipped: an earlier uncompacted message left out
 * (the id named is the one left out); reordered: named after a later one.
 */
export type MessageProblemKind = 'foreign-message' | 'duplicate-message' | 'skipped-message' | 'reordered-message';
/** As for messages, against the saved summaries from the oldest on. */
export type SummaryProblemKind = 'foreign-summary' | 'duplicate-summary' | 'skipped-summary' | 'reordered-summary';

/** One segment of an accepted compaction. */
export interface PlannedSegment {
  /** A new id, or for a merge the id of the oldest segment it replaces. */
  readonly summaryId: string;
  /** New messages it covers (a segment of new messages), oldest first. */
  readonly messageIds: readonly string[];
  /** Old summaries it merges (a merge), oldest first. */
  readonly replacesSummaryIds: readonly string[];
  readonly content: string;
  readonly focusSections: readonly string[];
  readonly truncated: boolean;
  readonly tokens: number;
}

export interface CompactionPlan {
  /** In the provider's order. */
  readonly segments: readonly PlannedSegment[];
  /** The messages marked compacted: the oldest uncompacted ones, in story order. */
  readonly markedMessageIds: readonly string[];
  /** Old summaries that go away: every replaced one except the oldest of each merge, whose id the merge keeps. */
  readonly deletedSummaryIds: readonly string[];
  /** Old summaries left exactly as they are. */
  readonly keptSummaryIds: readonly string[];
  /** The saved summaries afterwards, in story order. */
  readonly summaryIds: readonly string[];
  /** Estimated tokens of all saved summaries afterwards. */
  readonly totalTokens: number;
}

export type CompactionValidation =
  /** The provider returned no segment: nothing to compact now. */
  | { readonly status: 'nothing' }
  | { readonly status: 'accepted'; readonly plan: CompactionPlan }
  | { readonly status: 'rejected'; readonly problems: readonly CompactionProblem[] };

/**
 * Checks a `history.compact@2` result against the stored history (spec §1 "History compaction"):
 * new messages must be the continuous uncompacted prefix (the first segment starts at the oldest
 * uncompacted message, later ones go on from there), replaced summaries continuous from the
 * oldest; a segment covers new messages or old summaries, not both and not neither; kept and new
 * segments together keep the total, per-segment and count limits. Every problem is named; a
 * rejected result changes nothing. A kept segment is not held to today's per-segment limit (it was
 * accepted under its own; a smaller window is met through the total limit, which merges).
 */
export function validateCompaction(input: CompactionValidationInput): CompactionValidation {
  const { result, limits } = input;
  if (result.summaries.length === 0) return { status: 'nothing' };
  const problems: CompactionProblem[] = [];

  result.summaries.forEach((s, segment) => {
    const messages = s.messageIds.length > 0;
    const merges = s.replacesSummaryIds.length > 0;
    if (!messages && !merges) problems.push({ kind: 'empty-segment', segment });
    if (messages && merges) problems.push({ kind: 'mixed-segment', segment });
  });

  const named = (pick: (s: CompactResult['summaries'][number]) => readonly string[]) =>
    result.summaries.flatMap((s, segment) => pick(s).map((id) => ({ segment, id })));
  for (const p of continuity(
    input.uncompactedPrefix,
    named((s) => s.messageIds),
  )) {
    problems.push({ kind: `${p.kind}-message`, segment: p.segment, messageId: p.id });
  }
  const stored = input.summaries.map((s) => s.summaryId);
  for (const p of continuity(
    stored,
    named((s) => s.replacesSummaryIds),
  )) {
    problems.push({ kind: `${p.kind}-summary`, segment: p.segment, summaryId: p.id });
  }

  const tokens = result.summaries.map((s) => estimateTokens(s.content));
  tokens.forEach((t, segment) => {
    if (t > limits.segmentTokens) problems.push({ kind: 'segment-too-long', segment, tokens: t, limit: limits.segmentTokens });
  });
  const replaced = new Set(result.summaries.flatMap((s) => s.replacesSummaryIds));
  const kept = input.summaries.filter((s) => !replaced.has(s.summaryId));
  const totalTokens = kept.reduce((sum, s) => sum + estimateTokens(s.content), 0) + tokens.reduce((a, b) => a + b, 0);
  if (totalTokens > limits.totalTokens) problems.push({ kind: 'total-too-long', tokens: totalTokens, limit: limits.totalTokens });
  const count = kept.length + result.summaries.length;
  if (count > limits.maxSegments) problems.push({ kind: 'too-many-segments', count, limit: limits.maxSegments });

  if (problems.length > 0) return { status: 'rejected', problems };

  const segments = result.summaries.map((s, i): PlannedSegment => ({
    summaryId: s.replacesSummaryIds[0] ?? input.newSummaryId(),
    messageIds: s.messageIds,
    replacesSummaryIds: s.replacesSummaryIds,
    content: s.content,
    focusSections: s.focusSections,
    truncated: s.truncated ?? false,
    tokens: tokens[i],
  }));
  const merged = new Map(segments.filter((s) => s.replacesSummaryIds.length > 0).map((s) => [s.summaryId, s]));
  return {
    status: 'accepted',
    plan: {
      segments,
      markedMessageIds: segments.flatMap((s) => s.messageIds),
      deletedSummaryIds: stored.filter((id) => replaced.has(id) && !merged.has(id)),
      keptSummaryIds: kept.map((s) => s.summaryId),
      summaryIds: [
        ...stored.filter((id) => merged.has(id) || !replaced.has(id)),
        ...segments.filter((s) => s.replacesSummaryIds.length === 0).map((s) => s.summaryId),
      ],
      totalTokens,
    },
  };
}

type ContinuityProblem = { kind: 'foreign' | 'duplicate' | 'skipped' | 'reordered'; segment: number; id: string };

/** Problems of `named` (in order) as a continuous prefix of `expected`. */
function continuity(expected: readonly string[], named: readonly { segment: number; id: string }[]): ContinuityProblem[] {
  const place = new Map(expected.map((id, i) => [id, i]));
  const seen = new Set<string>();
  const problems: ContinuityProblem[] = [];
  let next = 0;
  for (const { segment, id } of named) {
    if (seen.has(id)) {
      problems.push({ kind: 'duplicate', segment, id });
      continue;
    }
    seen.add(id);
    const at = place.get(id);
    if (at === undefined) {
      problems.push({ kind: 'foreign', segment, id });
    } else if (at < next) {
      problems.push({ kind: 'reordered', segment, id });
    } else {
      // everything between the last one taken and this one was left out (none of it was named yet:
      // naming it would have moved `next` past it)
      for (let k = next; k < at; k++) problems.push({ kind: 'skipped', segment, id: expected[k] });
      next = at + 1;
    }
  }
  return problems;
}
