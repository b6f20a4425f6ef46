/**
 * The spec's character estimate of tokens (spec §5 "Measuring the prefix"): about one token per CJK
 * character and one per four other characters, counted per code point. The framework's own
 * estimator is not reachable from a `prompt.segment@1` handler (`ctx` carries no `estimateTokens`;
 * only the compaction provider gets one), so the plugin counts the same way itself; its tests check
 * that both agree.
 */
export function estimateTokens(text: string): number {
  let cjk = 0;
  let other = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    if ((c >= 0x3000 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xff00 && c <= 0xffef)) cjk++;
    else other++;
  }
  return cjk + Math.ceil(other / 4);
}
