import type { Locale, PluginSdk } from '../../../libs/plugins-sdk';

/** The player's one-line summary helper (`ctx.sdk`). */
type Sdk = Pick<PluginSdk, 'clipLine'>;
/** The longest summary line (code points). */
const SUMMARY_MAX = 200;
/** The longest term shown (code points). */
const TERM_MAX = 60;

/** A recorded entry: its term and whether the call added it (else updated it). */
export interface RecordedEntry {
  term: string;
  added: boolean;
}

/**
 * One line for the player, in the call's order: "Codex: soot-black ledger (new), the ash river
 * (updated)" / "词条：……（新）、……（更新）"; that nothing changed for an empty call.
 */
export function codexSummary(sdk: Sdk, entries: readonly RecordedEntry[], locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  if (entries.length === 0) return undefined; // nothing changed: nothing to tell the player
  const parts = entries.map((e) => {
    const term = sdk.clipLine(e.term, TERM_MAX);
    if (zh) return `${term}（${e.added ? '新' : '更新'}）`;
    return `${term} (${e.added ? 'new' : 'updated'})`;
  });
  return sdk.clipLine(zh ? `词条：${parts.join('、')}` : `Codex: ${parts.join(', ')}`, SUMMARY_MAX);
}
