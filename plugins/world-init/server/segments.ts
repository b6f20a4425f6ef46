import type { HandlerContext, Locale, ReturnedSegment, WorldView } from '../../../libs/plugins-sdk';
import { constantDimensions, declaredDimensions, trackedDimensions, type DeclaredDimension } from './dimensions';
import { codePoints, cutTo, fitLines, type FitItem } from './fit';
import { localizeValue } from './localize';
import type { Snapshot } from './state';
import { segmentText } from './text';

/** `<world-dimensions>`' total budget, in characters (code points): spec §4. */
export const WORLD_DIMENSIONS_BUDGET = 12_000;
/** What a value over the budget is cut to (spec §4: 240 characters, with an ellipsis). */
export const PREVIEW_CHARS = 240;
/** `<dimension-rules>`' and `<dimension-values>`' budgets, in characters. */
export const RULES_BUDGET = 12_000;
export const VALUES_BUDGET = 12_000;

type Sdk = HandlerContext['sdk'];

const json = (value: unknown, sdk: Sdk) => JSON.stringify(sdk.modelFacingJson(value) ?? null);

/** A tag block: `body` lines escaped (they carry world data), then `fixed` lines as they are (the plugin's own text). */
const block = (tag: string, body: string[], sdk: Sdk, fixed: string[] = []) =>
  `<${tag}>\n${[...body.map((l) => sdk.escapeXml(l)), ...fixed].join('\n')}\n</${tag}>`;

/**
 * `<world-dimensions>` (spec §4 "Segment for the narrative"): each dimension's id, version and value
 * (localized where its schema carries `x-i18n`), sorted by id, within 12,000 characters. All values
 * are whole when they fit; else the longest are cut to 240 characters and marked as previews (never
 * passed off as complete JSON); what still does not fit is counted, with the tools that read it.
 */
export function worldDimensionsSegment(world: WorldView, snapshot: Snapshot, locale: Locale, sdk: Sdk): ReturnedSegment | null {
  const dims = declaredDimensions(world);
  if (dims.length === 0) return null;
  const t = segmentText(locale);
  const items: FitItem[] = dims.map(([id, d]) => {
    const state = snapshot.dimensions[id];
    return {
      id,
      full: json(localizeValue(state.value, d.schema, locale), sdk),
      line: (value, preview) => (preview ? `- ${id} (v${state.version}, ${t.preview(PREVIEW_CHARS)}): ${value}` : `- ${id} (v${state.version}): ${value}`),
    };
  });
  const frame = (lines: string[], cut: number, omitted: number) =>
    block('world-dimensions', [...lines, ...(cut > 0 ? [t.previewNote] : []), ...(omitted > 0 ? [t.omitted(omitted)] : [])], sdk);
  const fitted = fitLines(items, { budget: WORLD_DIMENSIONS_BUDGET, cutLength: PREVIEW_CHARS, frame });
  return {
    id: 'world-dimensions',
    content: frame(fitted.lines, fitted.cut.length, fitted.omitted.length),
    position: 'system',
    audience: 'story',
    volatility: 'turn',
  };
}

/**
 * What `<world-dimensions>` is, for the story's system prompt (session): the line is the same every
 * turn, so it stays out of the turn context (spec §2 "Layout for bookkeeping runtimes": only the
 * values that change go in the turn context), which the story pays for uncached each turn.
 */
export function worldDimensionsIntroSegment(world: WorldView, locale: Locale): ReturnedSegment | null {
  if (declaredDimensions(world).length === 0) return null;
  return { id: 'world-dimensions-intro', content: segmentText(locale).worldHead, position: 'system', audience: 'story', volatility: 'session' };
}

/** One tracked dimension's rule entry (name, description, rule, schema): `<dimension-rules>` and dimension-rule-get. */
export function ruleEntry(id: string, d: DeclaredDimension, locale: Locale, sdk: Sdk): string {
  const l = segmentText(locale).labels;
  return [
    `- id: ${id}`,
    `  ${l.name}: ${d.name}`,
    ...(d.description ? [`  ${l.description}: ${d.description}`] : []),
    `  ${l.rule}: ${(d.updateRule ?? '').trim()}`,
    `  ${l.schema}: ${json(d.schema, sdk)}`,
  ].join('\n');
}

/**
 * `<dimension-rules>` (session, the tracker's system prompt): the rule and schema of each tracked
 * dimension, and the constant dimensions (no valid rule) with their values — all from the world
 * file, so the text is the same every turn. Entries that do not fit in the budget are listed by id
 * under "truncated" (dimension-rule-get pages them). No version: it changes with every update.
 */
export function dimensionRulesSegment(world: WorldView, locale: Locale, sdk: Sdk): ReturnedSegment | null {
  const tracked = trackedDimensions(world);
  if (tracked.length === 0) return null;
  const t = segmentText(locale);
  const constants = constantDimensions(world).map(([id, d]) => `- ${id} (${d.name}): ${cutTo(json(d.value, sdk), PREVIEW_CHARS)}`);
  const frame = (entries: string[], truncated: string[]) =>
    block(
      'dimension-rules',
      [
        t.rulesHead,
        '',
        t.trackedHead,
        ...entries,
        ...(constants.length > 0 ? ['', t.constantHead, ...constants] : []),
        ...(truncated.length > 0 ? ['', t.truncatedHead(truncated.length), ...truncated.map((id) => `- ${id}`)] : []),
      ],
      sdk,
      // fixed text naming a tag: not data, so not escaped
      ['', t.valuesHead],
    );
  const entries = tracked.map(([id, d]) => ({ id, text: ruleEntry(id, d, locale, sdk) }));
  let kept = entries.length;
  const render = () =>
    frame(
      entries.slice(0, kept).map((e) => e.text),
      entries.slice(kept).map((e) => e.id),
    );
  while (kept > 0 && codePoints(render()) > RULES_BUDGET) kept--;
  return { id: 'dimension-rules', content: render(), position: 'system', audience: 'self', volatility: 'session' };
}

/**
 * `<dimension-values>` (turn, the tracker's turn context; the line saying what it is closes
 * `<dimension-rules>`): one line per tracked dimension, `id:
 * <frozen value as JSON>`, the raw value (not localized: the tracker writes raw values), no
 * version. Over the budget the longest values are cut to previews (world-dimension-get reads them).
 */
export function dimensionValuesSegment(world: WorldView, snapshot: Snapshot, locale: Locale, sdk: Sdk): ReturnedSegment | null {
  const tracked = trackedDimensions(world);
  if (tracked.length === 0) return null;
  const t = segmentText(locale);
  const items: FitItem[] = tracked.map(([id]) => ({
    id,
    full: json(snapshot.dimensions[id].value, sdk),
    line: (value, preview) => (preview ? `${id} (${t.preview(PREVIEW_CHARS)}): ${value}` : `${id}: ${value}`),
  }));
  const frame = (lines: string[], cut: number, omitted: number) =>
    block('dimension-values', [...lines, ...(cut > 0 ? [t.previewNote] : []), ...(omitted > 0 ? [t.omitted(omitted)] : [])], sdk);
  const fitted = fitLines(items, { budget: VALUES_BUDGET, cutLength: PREVIEW_CHARS, frame });
  return {
    id: 'dimension-values',
    content: frame(fitted.lines, fitted.cut.length, fitted.omitted.length),
    position: 'system',
    audience: 'self',
    volatility: 'turn',
  };
}
