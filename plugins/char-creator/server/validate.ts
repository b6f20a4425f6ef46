import type { CharacterSchema } from '../../../libs/plugins-sdk';

/** A refused tool call: the tool fails with this message and nothing is written. */
export class CharacterToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CharacterToolError';
  }
}

type Property = CharacterSchema['properties'][string];

const typesOf = (p: Property): string[] => (p.type === undefined ? [] : Array.isArray(p.type) ? p.type : [p.type]);

function matchesType(type: string, value: unknown): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

/**
 * Checks field values against the world's `characterSchema`: a field it declares (when it declares
 * any), of its type, within `minimum`..`maximum`. The first problem is a `CharacterToolError`
 * naming `<path>.<field>`.
 */
export function checkFields(schema: CharacterSchema | undefined, fields: unknown, path: string): Record<string, unknown> {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new CharacterToolError(`${path}: expected an object of field values`);
  const properties = schema?.properties ?? {};
  const declared = Object.keys(properties);
  for (const [name, value] of Object.entries(fields as Record<string, unknown>)) {
    const at = `${path}.${name}`;
    if (declared.length > 0 && !Object.hasOwn(properties, name))
      throw new CharacterToolError(`${at}: unknown field "${name}"; the fields are: ${declared.join(', ')}`);
    const property = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (!property) continue;
    const types = typesOf(property);
    if (types.length > 0 && !types.some((t) => matchesType(t, value)))
      throw new CharacterToolError(`${at}: ${JSON.stringify(value)} is not of type ${types.join(' or ')}`);
    if (typeof value === 'number') {
      if (property.minimum !== undefined && value < property.minimum)
        throw new CharacterToolError(`${at}: ${value} is below the minimum ${property.minimum} (range ${property.minimum}..${property.maximum ?? '∞'})`);
      if (property.maximum !== undefined && value > property.maximum)
        throw new CharacterToolError(`${at}: ${value} is above the maximum ${property.maximum} (range ${property.minimum ?? '-∞'}..${property.maximum})`);
    }
  }
  return { ...(fields as Record<string, unknown>) };
}

/** `integer 0..10`, `string`: a property's type and range, for `<character-schema>`. */
export function describeType(p: Property): string {
  const type = typesOf(p).join(' | ') || 'any';
  if (p.minimum === undefined && p.maximum === undefined) return type;
  return `${type} ${p.minimum ?? '-∞'}..${p.maximum ?? '∞'}`;
}
