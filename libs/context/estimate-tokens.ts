/** Spec §5 "Measuring the prefix": about one token per CJK character, one per four other characters. */
export function estimateTokens(text: string): number {
  let cjk = 0;
  let other = 0;
  for (const ch of text) {
    if (/[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/u.test(ch)) cjk++;
    else other++;
  }
  return cjk + Math.ceil(other / 4);
}
