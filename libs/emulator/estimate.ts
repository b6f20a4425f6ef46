/** The emulator's stand-in tokenizer: one token per CJK character, one per four other characters. */
export function emulatorTokenCount(text: string): number {
  let cjk = 0;
  for (const ch of text) if (/[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff]/u.test(ch)) cjk++;
  const other = [...text].length - cjk;
  return cjk + Math.ceil(other / 4);
}
