import type { Locale, WorldView, PluginSdk } from '../../../libs/plugins-sdk';

/** The player's one-line summary helper (`ctx.sdk`). */
type Sdk = Pick<PluginSdk, 'clipLine'>;
/** The longest summary line (code points). */
const SUMMARY_MAX = 200;
/** The longest relation shown (code points). */
const RELATION_MAX = 60;

/** A written relation: set (`relation` a string) or removed (`null`). */
export interface WrittenRelation {
  from: string;
  to: string;
  relation: string | null;
}

/**
 * One line for the player, characters by name, in the call's order: "Tomas Vell → Ash: keeps an
 * eye on the courier; Mira → Tomas Vell: (removed)"; that nothing changed for an empty call.
 */
export function relationsSummary(sdk: Sdk, written: readonly WrittenRelation[], world: WorldView | null, locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  if (written.length === 0) return undefined; // nothing changed: nothing to tell the player
  const names = new Map((world?.characters ?? []).map((c) => [c.id, c.name]));
  const name = (id: string) => names.get(id) ?? id;
  const parts = written.map((r) => {
    const what = r.relation === null ? (zh ? '（已移除）' : '(removed)') : sdk.clipLine(r.relation, RELATION_MAX);
    return `${name(r.from)} → ${name(r.to)}${zh ? '：' : ': '}${what}`;
  });
  return sdk.clipLine(parts.join(zh ? '；' : '; '), SUMMARY_MAX);
}
