import type { Locale } from '../plugins-sdk';
import { dataBlock, escapeXml, modelFacingJson, selfDataRow } from '../data-boundary';
import { fixedText } from './fixed-text';
import type { Activation, ExtensionSegment, InputSlot, RuntimeExport, SelfDataBlock } from './types';

export interface TurnContextInput {
  locale: Locale;
  selfData: readonly SelfDataBlock[];
  inputs: readonly InputSlot[];
  exports: readonly RuntimeExport[];
  activation?: Activation;
  turnSegments: readonly ExtensionSegment[];
}

/** Only pluginId and runtimeId are provenance in the prompt; resultId stays with tools. */
const provenance = (s: { pluginId: string; runtimeId: string }) => ({ pluginId: s.pluginId, runtimeId: s.runtimeId });

const json = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * Spec §2 "Turn context": this turn's data blocks and the `system`/`turn` segments, as the text of
 * one system message placed after the history and before the current player input.
 */
export function renderTurnContext(input: TurnContextInput): string {
  const t = fixedText(input.locale);
  const blocks: string[] = [];
  for (const block of input.selfData) {
    if (block.totalRows === 0 && block.rows.length === 0) continue; // an empty namespace: no block
    const rows = block.rows.map((r) => selfDataRow(r.key, r.value));
    if (block.totalRows > block.rows.length) rows.push(t.rowsTruncated(block.rows.length, block.totalRows));
    blocks.push(`<self-data namespace="${escapeXml(block.namespace)}">\n${escapeXml(rows.join('\n'))}\n</self-data>`);
  }
  if (input.inputs.length > 0) {
    const slots: Record<string, unknown> = {};
    for (const s of input.inputs) {
      slots[s.binding] = {
        cardinality: s.cardinality,
        ...(s.cardinality === 'one' ? { value: modelFacingJson(s.value ?? null) } : { items: modelFacingJson(s.items ?? []) }),
        ...(s.sources && s.sources.length > 1 ? { sources: s.sources.map(provenance) } : { source: provenance(s.source) }),
      };
    }
    blocks.push(dataBlock('runtime-inputs', json(slots)));
  }
  if (input.exports.length > 0) {
    const exported: Record<string, unknown> = {};
    for (const e of input.exports) exported[e.name] = { value: modelFacingJson(e.value), source: provenance(e.source) };
    blocks.push(dataBlock('runtime-exports', json(exported)));
  }
  const a = input.activation;
  if (a && a.kind !== 'stage') {
    blocks.push(
      dataBlock('runtime-activation', json({ kind: a.kind, ...(a.kind === 'event' ? { topic: a.topic } : {}), payload: modelFacingJson(a.payload) })),
    );
  }
  for (const segment of input.turnSegments) blocks.push(segment.content);
  return blocks.filter((b) => b.trim() !== '').join('\n\n');
}
