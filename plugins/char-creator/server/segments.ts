import type { HandlerContext, PromptLoader, ReturnedSegment } from '../../../libs/plugins-sdk';
import type { SessionCharacter } from './characters';
import { describeType } from './validate';

export interface SegmentOptions {
  ctx: Pick<HandlerContext, 'locale' | 'sdk' | 'world'>;
  prompts: Pick<PromptLoader, 'loadOrThrow'>;
  characters: readonly SessionCharacter[];
}

/** One line of a data block: whitespace folded, XML-escaped. */
const oneLine = (ctx: SegmentOptions['ctx'], text: string) => ctx.sdk.escapeXml(text.replace(/\s+/g, ' ').trim());

/**
 * Field values in a stable order (the store does not keep key order): the schema's properties in
 * its order, then any others by name.
 */
export function orderedFields(fields: Record<string, unknown>, declared: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of declared) if (Object.hasOwn(fields, name)) out[name] = fields[name];
  for (const name of Object.keys(fields).sort()) if (!Object.hasOwn(out, name)) out[name] = fields[name];
  return out;
}

const block = (tag: string, intro: string | null, lines: string[]) => [`<${tag}>`, ...(intro === null ? [] : [intro]), ...lines, `</${tag}>`].join('\n');

/**
 * The tracker's segments (spec §2 "Layout for bookkeeping runtimes"): the roster — id, name, type,
 * description, nothing that changes with a field — the field schema and the line saying what
 * `<character-fields>` is as session segments (the system prompt), each character's current
 * fields as a turn segment (the turn context, without that constant line: the tracker's history
 * window slides, so its turn context is sent uncached every turn). A field change touches only
 * `<character-fields>`; a created character changes the roster.
 */
export function characterSegments(options: SegmentOptions): ReturnedSegment[] {
  const { ctx, prompts, characters } = options;
  const segments: ReturnedSegment[] = [];
  const line = (s: string) => oneLine(ctx, s);
  const properties = Object.entries(ctx.world?.characterSchema.properties ?? {});
  segments.push({
    id: 'existing-characters',
    content: block(
      'existing-characters',
      prompts.loadOrThrow('roster-intro', ctx.locale),
      characters.map((c) => `- ${c.id} | ${line(c.name)} | ${line(c.type)} | ${line(c.description)}`),
    ),
    position: 'system',
    audience: 'self',
    volatility: 'session',
  });
  if (properties.length > 0)
    segments.push({
      id: 'character-schema',
      content: block(
        'character-schema',
        prompts.loadOrThrow('schema-intro', ctx.locale),
        properties.map(([name, p]) => `- ${name} | ${describeType(p)} | ${line(p.description ?? '')}`.trimEnd()),
      ),
      position: 'system',
      audience: 'self',
      volatility: 'session',
      order: 1,
    });
  // what <character-fields> is: the same every turn, so in the system prompt; the turn block has only the values
  segments.push({
    id: 'character-fields-intro',
    content: prompts.loadOrThrow('fields-intro', ctx.locale),
    position: 'system',
    audience: 'self',
    volatility: 'session',
    order: 2,
  });
  segments.push({
    id: 'character-fields',
    content: block(
      'character-fields',
      null,
      characters.map((c) => {
        const fields = orderedFields(
          c.fields,
          properties.map(([name]) => name),
        );
        return `- ${c.id} | ${ctx.sdk.escapeXml(JSON.stringify(ctx.sdk.modelFacingJson(fields)))}`;
      }),
    ),
    position: 'system',
    audience: 'self',
    volatility: 'turn',
  });
  return segments;
}
