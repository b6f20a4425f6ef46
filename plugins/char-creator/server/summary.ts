import type { Locale, PluginSdk } from '../../../libs/plugins-sdk';
import type { KeptCharacter } from './characters';

/** The player's one-line summary helper (`ctx.sdk`). */
type Sdk = Pick<PluginSdk, 'clipLine'>;
/** The longest summary line (code points). */
const SUMMARY_MAX = 200;
/** The longest value shown in a summary (code points). */
const VALUE_MAX = 40;

const shown = (sdk: Sdk, value: unknown): string =>
  value === undefined ? '—' : sdk.clipLine(typeof value === 'string' ? value : JSON.stringify(value), VALUE_MAX);
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** "New character: Old Bren" / "新角色：Old Bren". */
export function createdSummary(sdk: Sdk, name: string, locale: Locale): string {
  return sdk.clipLine(locale === 'zh-Hans' ? `新角色：${name}` : `New character: ${name}`, SUMMARY_MAX);
}

/** A character before and after an update. */
export interface CharacterChange {
  before: KeptCharacter;
  after: KeptCharacter;
}

/**
 * "Mira: trust 2 → 3, status mending a net → ferrying the courier; Ash: …": each character's
 * fields whose value changed (in `order`, then by name), by the character's name; that nothing
 * changed when no value did.
 */
export function updatedSummary(sdk: Sdk, changes: readonly CharacterChange[], order: readonly string[], locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  const parts = changes.flatMap(({ before, after }) => {
    // the schema's order, then any others by name (the store does not keep key order)
    const names = [
      ...order.filter((n) => Object.hasOwn(after.fields, n)),
      ...Object.keys(after.fields)
        .filter((n) => !order.includes(n))
        .sort(),
    ];
    const fields = names
      .filter((name) => !sameJson(before.fields[name], after.fields[name]))
      .map((name) => `${name} ${shown(sdk, before.fields[name])} → ${shown(sdk, after.fields[name])}`);
    return fields.length === 0 ? [] : [`${after.name}${zh ? '：' : ': '}${fields.join(zh ? '，' : ', ')}`];
  });
  if (parts.length === 0) return undefined; // nothing changed: nothing to tell the player
  return sdk.clipLine(parts.join(zh ? '；' : '; '), SUMMARY_MAX);
}
