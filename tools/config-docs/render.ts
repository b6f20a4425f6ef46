import { z } from 'zod';
import { EngineEnv } from '../../libs/engine';
import { LlmConfigSchema, ProviderEnv } from '../../libs/providers';
import { TelemetryEnv } from '../../libs/telemetry';
import { type DocsBlock, markdownTable } from '../docs-block';
import { OTHER_VARIABLES } from './other-variables';

/**
 * docs/configuration.md's generated blocks: every environment variable and `llm.toml` key, from
 * the zod schemas the engine validates with (their `.meta({ description })`), through
 * `z.toJSONSchema`. `npm run docs:config` writes them; a unit test checks the page is current.
 */
export const CONFIGURATION_DOC = 'docs/configuration.md';

type Json = z.core.JSONSchema.BaseSchema;

const code = (v: unknown) => `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``;

const FORMATS: Record<string, string> = { ipv4: 'IPv4 address', ipv6: 'IPv6 address', hostname: 'host name', uri: 'URL' };

/** Accepted values in words: `on` \| `off`, integer 1–65535, URL, ... */
export function describeType(s: Json): string {
  if (s.anyOf) return s.anyOf.map((x) => describeType(x as Json)).join(' or ');
  if (s.enum) return s.enum.map(code).join(', ');
  if (s.type === 'integer' || s.type === 'number') {
    const word = s.type === 'integer' ? 'integer' : 'number';
    const min = s.exclusiveMinimum === 0 ? null : s.minimum;
    const max = s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER ? s.maximum : undefined;
    if (s.exclusiveMinimum === 0 && max === undefined) return `positive ${word}`;
    if (min === 0 && max === undefined) return `${word} ≥ 0`;
    if (min !== undefined && min !== null && max !== undefined) return `${word} ${min.toLocaleString('en-US')}–${max.toLocaleString('en-US')}`;
    return word;
  }
  if (s.type === 'string') {
    if (s.format && FORMATS[s.format]) return FORMATS[s.format];
    if (s.pattern) return `string matching ${code(s.pattern)}`;
    if (s.minLength === 1) return 'non-empty string';
    return 'string';
  }
  if (s.type === 'boolean') return '`true` or `false`';
  if (s.type === 'object') return 'table';
  return String(s.type ?? 'any');
}

const describe = (s: Json) => (s.description ?? '').replace(/\n/g, ' ');

/** One row per variable of an env schema: name, default, accepted values, description. */
export function envTable(schema: z.ZodObject): string {
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' });
  const rows = Object.entries(json.properties ?? {}).map(([name, s]) => {
    const p = s as Json;
    if (!p.description) throw new Error(`${name}: no description (add .meta({ description }) to its schema)`);
    return [`\`${name}\``, p.default === undefined ? '—' : code(p.default), describeType(p), describe(p)];
  });
  return markdownTable(['variable', 'default', 'accepted', 'what it does'], rows);
}

/** Rows for the keys of a TOML table schema, recursing into sub-tables; `<name>` for a catch-all. */
function tomlRows(s: Json, path: string, required: readonly string[], rows: string[][]): void {
  for (const [key, value] of Object.entries(s.properties ?? {})) {
    const p = value as Json;
    const at = path ? `${path}.${key}` : key;
    const shared = p.additionalProperties && typeof p.additionalProperties === 'object' ? (p.additionalProperties as Json) : null;
    if (p.type === 'object' && shared) {
      const named = Object.keys(p.properties ?? {});
      const names = named.length ? ` Named: ${named.map(code).join(', ')}.` : '';
      rows.push([`\`[${at}.<name>]\``, required.includes(key) ? 'yes' : 'no', '—', 'table', `${describe(p)}${names}`]);
      tomlRows(shared, `${at}.<name>`, shared.required ?? [], rows);
    } else if (p.type === 'object' && p.properties) {
      rows.push([`\`[${at}]\``, required.includes(key) ? 'yes' : 'no', '—', 'table', describe(p)]);
      tomlRows(p, at, p.required ?? [], rows);
    } else {
      if (!p.description) throw new Error(`llm.toml ${at}: no description (add .meta({ description }) to its schema)`);
      rows.push([`\`${at}\``, required.includes(key) ? 'yes' : 'no', p.default === undefined ? '—' : code(p.default), describeType(p), describe(p)]);
    }
  }
}

/** The keys of a TOML file's schema (`llm.toml`: `LlmConfig`), one row each. */
export function tomlTable(schema: z.ZodType = LlmConfigSchema): string {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  const rows: string[][] = [];
  tomlRows(json, '', json.required ?? [], rows);
  return markdownTable(['key', 'required', 'default', 'accepted', 'what it does'], rows);
}

export function otherVariables(): string {
  return OTHER_VARIABLES.map((group) =>
    [
      `**${group.title}**, read by ${group.readBy}:`,
      '',
      markdownTable(
        ['variable', 'default', 'what it does'],
        group.variables.map((v) => [`\`${v.name}\``, v.default ?? '—', v.description]),
      ),
    ].join('\n'),
  ).join('\n\n');
}

/** Every variable name the page documents (the schemas' and the hand-kept list's). */
export function documentedVariables(): Set<string> {
  const names = [EngineEnv, ProviderEnv, TelemetryEnv].flatMap((s) => Object.keys(s.shape));
  return new Set([...names, ...OTHER_VARIABLES.flatMap((g) => g.variables.map((v) => v.name))]);
}

export function configBlocks(): DocsBlock[] {
  return [
    { marker: 'config:env', content: envTable(EngineEnv) },
    { marker: 'config:providers', content: envTable(ProviderEnv) },
    { marker: 'config:telemetry', content: envTable(TelemetryEnv) },
    { marker: 'config:other-env', content: otherVariables() },
    { marker: 'config:llm-toml', content: tomlTable() },
  ];
}
