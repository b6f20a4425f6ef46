import { comparePrefix, type FirstDifference, type RecordedRequest } from './prefix-compare';

export interface RecordedCall extends RecordedRequest {
  sessionId: string;
  turnId: string;
  pluginId: string;
  runtimeId: string;
  callId: string;
  position: number;
  /** Provider-reported (or emulated) cached input tokens, when known. */
  cachedTokens?: number | null;
}

export interface PrefixRow {
  sessionId: string;
  turn: number;
  turnId: string;
  runtime: string;
  callId: string;
  requestTokens: number;
  /** null on a runtime's first turn: nothing to compare with. */
  sharedTokens: number | null;
  sharedPercent: number | null;
  firstDifference: FirstDifference | null;
  providerCachedTokens: number | null;
}

/**
 * Per runtime, the first request of each turn compared with the first request of the previous
 * turn. Later requests of a turn (tool loops) are not compared. `calls` in log order.
 */
export function prefixReport(calls: readonly RecordedCall[]): PrefixRow[] {
  const turnNumbers = new Map<string, number>();
  const seen = new Set<string>();
  const previousFirst = new Map<string, RecordedCall>();
  const rows: PrefixRow[] = [];
  for (const call of [...calls].sort((a, b) => a.position - b.position)) {
    const turnKey = `${call.sessionId}/${call.turnId}`;
    if (!turnNumbers.has(turnKey)) turnNumbers.set(turnKey, [...turnNumbers.keys()].filter((k) => k.startsWith(`${call.sessionId}/`)).length + 1);
    const runtime = `${call.pluginId}/${call.runtimeId}`;
    const firstKey = `${turnKey}/${runtime}`;
    if (seen.has(firstKey)) continue;
    seen.add(firstKey);
    const runtimeKey = `${call.sessionId}/${runtime}`;
    const prev = previousFirst.get(runtimeKey);
    const cmp = prev ? comparePrefix(prev, call) : null;
    rows.push({
      sessionId: call.sessionId,
      turn: turnNumbers.get(turnKey)!,
      turnId: call.turnId,
      runtime,
      callId: call.callId,
      requestTokens: cmp?.requestTokens ?? comparePrefix(call, call).requestTokens,
      sharedTokens: cmp?.sharedTokens ?? null,
      sharedPercent: cmp?.sharedPercent ?? null,
      firstDifference: cmp?.firstDifference ?? null,
      providerCachedTokens: call.cachedTokens ?? null,
    });
    previousFirst.set(runtimeKey, call);
  }
  return rows;
}

/** One plain-text table per session. */
export function formatPrefixTables(rows: readonly PrefixRow[]): string {
  const out: string[] = [];
  for (const sessionId of [...new Set(rows.map((r) => r.sessionId))]) {
    out.push(`session ${sessionId}`);
    const table = [['turn', 'runtime', 'req tok', 'shared', 'shared %', 'cached (provider)', 'first difference']];
    for (const r of rows.filter((x) => x.sessionId === sessionId)) {
      const where = r.firstDifference ? differenceText(r.firstDifference) : r.sharedTokens === null ? '(first turn)' : '(none: prefix intact)';
      table.push([
        String(r.turn),
        r.runtime,
        String(r.requestTokens),
        r.sharedTokens === null ? '-' : String(r.sharedTokens),
        r.sharedPercent === null ? '-' : `${r.sharedPercent}%`,
        r.providerCachedTokens === null ? '-' : String(r.providerCachedTokens),
        where,
      ]);
    }
    out.push(...alignedTable(table), '');
  }
  out.push(TOKEN_ESTIMATE_NOTE);
  return out.join('\n');
}

/** What the tables say under them about their token counts. */
export const TOKEN_ESTIMATE_NOTE = "Token counts are estimates from characters (about 1 per CJK character, 1 per 4 others), not the provider's bill.";

/** Where a first difference is, in a table cell: `message 3 (user) @12 [history]`. */
export function differenceText(d: FirstDifference): string {
  return `${d.messageIndex === null ? d.role : `message ${d.messageIndex} (${d.role})`} @${d.offset}${d.section ? ` [${d.section}]` : ''}`;
}

/** A table's lines, each column padded to its widest cell (two spaces between columns). */
export function alignedTable(table: readonly (readonly string[])[]): string[] {
  const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
  return table.map((row) =>
    row
      .map((cell, c) => cell.padEnd(widths[c]))
      .join('  ')
      .trimEnd(),
  );
}
