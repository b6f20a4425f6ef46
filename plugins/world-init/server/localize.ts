import type { Locale } from '../../../libs/plugins-sdk';

type Schema = Readonly<Record<string, unknown>>;

const asSchema = (value: unknown): Schema | null => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Schema) : null);

/** The node's `x-i18n` labels for the locale: `{ "<locale>": { "<raw string>": "<label>" } }`. */
function labels(schema: Schema, locale: Locale): Record<string, unknown> | null {
  const byLocale = asSchema(schema['x-i18n']);
  return byLocale && Object.hasOwn(byLocale, locale) ? asSchema(byLocale[locale]) : null;
}

/**
 * The value as the story sees it in `locale` (spec §4: "Plain JSON is not guessed to be
 * translated. Only nodes that carry an x-i18n annotation are localized"): a string whose schema
 * node has `x-i18n.<locale>.<string>` becomes that label; objects and arrays are walked through
 * `properties` / `items`. Returns a new value; the source is never changed.
 */
export function localizeValue(value: unknown, schema: unknown, locale: Locale): unknown {
  const node = asSchema(schema);
  if (!node) return value;
  if (typeof value === 'string') {
    const map = labels(node, locale);
    const label = map && Object.hasOwn(map, value) ? map[value] : undefined;
    return typeof label === 'string' ? label : value;
  }
  if (Array.isArray(value)) return value.map((item) => localizeValue(item, node.items, locale));
  if (value !== null && typeof value === 'object') {
    const properties = asSchema(node.properties) ?? {};
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, Object.hasOwn(properties, k) ? localizeValue(v, properties[k], locale) : v]));
  }
  return value;
}
