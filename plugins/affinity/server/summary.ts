import type { Locale, WorldView, PluginSdk } from '../../../libs/plugins-sdk';

/** The player's one-line summary helper (`ctx.sdk`). */
type Sdk = Pick<PluginSdk, 'clipLine'>;
/** The longest summary line (code points). */
const SUMMARY_MAX = 200;
/** The longest feeling shown per character (code points). */
const FEELING_MAX = 60;

/** A written row: the character's id, score and feeling. */
export interface WrittenAffinity {
  character: string;
  score: number;
  feeling: string;
}

/**
 * One line for the player, each character by name: "Mira: 3 (amused, protective); Tomas: 1 (…)"
 * / "米拉：3（…）"; that nothing changed for an empty call.
 */
export function affinitySummary(sdk: Sdk, written: readonly WrittenAffinity[], world: WorldView | null, locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  if (written.length === 0) return undefined; // nothing changed: nothing to tell the player
  const names = new Map((world?.characters ?? []).map((c) => [c.id, c.name]));
  const parts = written.map((w) => {
    const name = names.get(w.character) ?? w.character;
    const feeling = sdk.clipLine(w.feeling, FEELING_MAX);
    return zh ? `${name}：${w.score}（${feeling}）` : `${name}: ${w.score} (${feeling})`;
  });
  return sdk.clipLine(parts.join(zh ? '；' : '; '), SUMMARY_MAX);
}
