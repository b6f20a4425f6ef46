import type { Locale, PluginSdk } from '../../../libs/plugins-sdk';

/** The player's one-line summary helper (`ctx.sdk`). */
type Sdk = Pick<PluginSdk, 'clipLine'>;
/** The longest summary line (code points). */
const SUMMARY_MAX = 200;

/**
 * One line for the player: "2 facts, 1 new term (the ash river)" / "2 条事实，1 个新词汇（…）", the
 * new terms as written; that nothing was recorded for empty lists.
 */
export function recordSummary(sdk: Sdk, facts: number, newTerms: readonly string[], locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  if (facts === 0 && newTerms.length === 0) return undefined; // nothing recorded: nothing to tell the player
  const parts: string[] = [];
  if (facts > 0) parts.push(zh ? `${facts} 条事实` : `${facts} ${facts === 1 ? 'fact' : 'facts'}`);
  if (newTerms.length > 0) {
    const list = newTerms.join(zh ? '、' : ', ');
    parts.push(zh ? `${newTerms.length} 个新词汇（${list}）` : `${newTerms.length} new ${newTerms.length === 1 ? 'term' : 'terms'} (${list})`);
  }
  const line = parts.join(zh ? '，' : ', ');
  // a long list of terms is cut, its closing bracket kept
  if (Array.from(line).length <= SUMMARY_MAX) return line;
  return `${sdk.clipLine(line, SUMMARY_MAX - 1)}${zh ? '）' : ')'}`;
}
