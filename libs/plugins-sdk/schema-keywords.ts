/**
 * JSON Schema (draft-07 and 2020-12) keywords a tool's parameters or an event's payload may use.
 * A key that is none of these (and does not start with `x-`) is almost always a slip — in YAML
 * flow style, `{ description: one, two }` makes `two` a key of its own — so the manifest refuses it,
 * naming the path, instead of sending a schema the model cannot read.
 */
const KEYWORDS = new Set([
  '$schema',
  '$id',
  '$ref',
  '$comment',
  '$defs',
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
  '$vocabulary',
  'type',
  'enum',
  'const',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'format',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
  'items',
  'additionalItems',
  'prefixItems',
  'maxItems',
  'minItems',
  'uniqueItems',
  'contains',
  'maxContains',
  'minContains',
  'unevaluatedItems',
  'maxProperties',
  'minProperties',
  'required',
  'properties',
  'patternProperties',
  'additionalProperties',
  'dependencies',
  'dependentRequired',
  'dependentSchemas',
  'propertyNames',
  'unevaluatedProperties',
  'if',
  'then',
  'else',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'definitions',
]);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas']);
/** Keywords whose value is a subschema. */
const SCHEMA_VALUES = new Set([
  'additionalProperties',
  'additionalItems',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
]);
/** Keywords whose value is a list of subschemas (`items` may be one or a list). */
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Paths (dot-separated, from the schema's root) of keys that are not JSON Schema keywords. */
export function unknownSchemaKeywords(schema: unknown, path: readonly (string | number)[] = []): (string | number)[][] {
  if (!isObject(schema)) return [];
  const found: (string | number)[][] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (!KEYWORDS.has(key) && !key.startsWith('x-')) {
      found.push([...path, key]);
      continue;
    }
    if (SCHEMA_MAPS.has(key) && isObject(value))
      for (const [name, sub] of Object.entries(value)) found.push(...unknownSchemaKeywords(sub, [...path, key, name]));
    else if (SCHEMA_VALUES.has(key)) found.push(...unknownSchemaKeywords(value, [...path, key]));
    else if (SCHEMA_LISTS.has(key)) {
      if (Array.isArray(value)) value.forEach((sub, i) => found.push(...unknownSchemaKeywords(sub, [...path, key, i])));
      else found.push(...unknownSchemaKeywords(value, [...path, key]));
    }
  }
  return found;
}
