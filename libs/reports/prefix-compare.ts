import { TextMemo } from '../memo';
import { commonGraphemePrefix, joinTallies, sliceAround, type TokenTally, tallyTokens, tokensOfTally } from '../text';
import { type PrefixUnit, prefixUnits } from './prefix-units';

export interface RecordedRequest {
  protocol: string;
  body: Record<string, unknown>;
  layout?: { systemSections: { name: string; length: number }[]; messageSections: string[] };
}

export interface FirstDifference {
  /** Index among the wire messages; null when the difference is in the tools or system part. */
  messageIndex: number | null;
  role: string;
  /** UTF-16 index into that unit's text, at the start of the first grapheme cluster that differs. */
  offset: number;
  /** Section of the spec's order, where the recorded layout tells it. */
  section: string | null;
  /** Up to 60 code points each side of the difference, in whole grapheme clusters. */
  before: string;
  after: string;
}

export interface PrefixComparison {
  requestTokens: number;
  sharedTokens: number;
  sharedPercent: number;
  firstDifference: FirstDifference | null;
}

const CONTEXT = 60;

/**
 * The tallies of long unit texts, kept across comparisons (about 8 MB of text at most): every
 * runtime's request of a turn repeats the history messages, and each request is compared again as
 * the previous one of the next turn's (issue 33). Same tallies: `tallyTokens` is pure.
 */
const keptTallies = new TextMemo<TokenTally>({ fromChars: 512, maxChars: 4_000_000 });
const tally = (text: string): TokenTally => keptTallies.answer(text, tallyTokens);

/**
 * A request as the comparison reads it: its units (`prefixUnits`) and each unit's tally, found once.
 * The prefix report measures each request once however many times it is compared (as the current
 * request, then as the previous one of the next turn's; issue 33: its body was parsed and cut into
 * units again each time).
 */
export interface MeasuredRequest {
  protocol: string;
  layout?: RecordedRequest['layout'];
  units: readonly PrefixUnit[];
  tallies: readonly TokenTally[];
  /** The request's estimate: its units' tokens summed. */
  requestTokens: number;
}

export function measureRequest(request: RecordedRequest): MeasuredRequest {
  const units = prefixUnits(request.protocol, request.body);
  const tallies = units.map((u) => tally(u.text));
  return {
    protocol: request.protocol,
    ...(request.layout ? { layout: request.layout } : {}),
    units,
    tallies,
    requestTokens: tallies.reduce((t, x) => t + tokensOfTally(x), 0),
  };
}

/**
 * Compares a request with the previous turn's, unit by unit and then character by character. Each
 * unit's text is scanned for the estimate once: the shared prefix's and the previous request's
 * figures are joined from the units' tallies (`joinTallies`), never re-estimated from their text.
 */
export function comparePrefix(previous: RecordedRequest, current: RecordedRequest): PrefixComparison {
  return compareMeasured(measureRequest(previous), measureRequest(current));
}

/** `comparePrefix` of two requests measured already (`measureRequest`). */
export function compareMeasured(previous: MeasuredRequest, current: MeasuredRequest): PrefixComparison {
  const a = previous.units;
  const b = current.units;
  const { tallies, requestTokens } = current;
  const previousTokens = tokensOfTally(joinTallies(previous.tallies));
  for (let i = 0; i < b.length; i++) {
    const u = b[i];
    const p = a[i];
    if (p && p.kind === u.kind && p.role === u.role && p.text === u.text) continue;
    const offset = p && p.role === u.role ? commonGraphemePrefix(p.text, u.text) : 0;
    const sharedTokens = tokensOfTally(joinTallies([...tallies.slice(0, i), tallyTokens(u.text.slice(0, offset))]));
    return {
      requestTokens,
      sharedTokens,
      sharedPercent: percent(sharedTokens, previousTokens),
      firstDifference: {
        messageIndex: u.messageIndex,
        role: u.role,
        offset,
        section: sectionOf(u, offset, current),
        before: sliceAround(p?.text ?? '', offset, CONTEXT),
        after: sliceAround(u.text, offset, CONTEXT),
      },
    };
  }
  const sharedTokens = tokensOfTally(joinTallies(tallies));
  return { requestTokens, sharedTokens, sharedPercent: percent(sharedTokens, previousTokens), firstDifference: null };
}

/** "shared %": the part of the previous turn's request the new one repeats from its first byte. */
function percent(shared: number, previousTotal: number): number {
  return previousTotal === 0 ? 100 : Math.round((Math.min(shared, previousTotal) / previousTotal) * 1000) / 10;
}

function sectionOf(unit: PrefixUnit, offset: number, request: Pick<RecordedRequest, 'protocol' | 'layout'>): string | null {
  const layout = request.layout;
  if (!layout) return null;
  if (unit.kind === 'system') {
    let at = 0;
    for (const s of layout.systemSections) {
      if (offset < at + s.length + 2) return s.name;
      at += s.length + 2; // sections are joined with one blank line
    }
    return layout.systemSections.at(-1)?.name ?? 'system';
  }
  if (unit.kind !== 'message' || unit.messageIndex === null) return null;
  return messageSectionOf(request, unit.messageIndex);
}

/** The section (of `layout.messageSections`) of a wire message, where the layout tells it; null for Gemini's merged contents. */
export function messageSectionOf(request: Pick<RecordedRequest, 'protocol' | 'layout'>, messageIndex: number): string | null {
  const layout = request.layout;
  if (!layout) return null;
  // wire messages map 1:1 onto [system, ...messages] for Chat; other protocols lift leading system out
  const leading = request.protocol === 'openai-chat' ? 0 : 1 + (layout.messageSections[1] === 'turn-context' ? 1 : 0);
  if (request.protocol === 'gemini') return null; // merged contents: no one-to-one map
  return layout.messageSections[messageIndex + leading] ?? null;
}
