import type { Locale } from '../plugins-sdk';
import { escapeXml } from '../data-boundary';
import { fixedText } from './fixed-text';
import type { ActivatedLoreEntry, Activation, EventCatalogEntry, ExtensionSegment, SystemSection } from './types';

export interface SystemPromptInput {
  locale: Locale;
  preamble: string;
  body: string;
  segments: readonly ExtensionSegment[];
  lorebook: readonly ActivatedLoreEntry[];
  eventCatalog: readonly EventCatalogEntry[];
  activation?: Activation;
  turnSegments: readonly ExtensionSegment[];
}

const byOrderThenId = (a: ActivatedLoreEntry, b: ActivatedLoreEntry) => a.order - b.order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function worldInfo(title: string, entries: readonly ActivatedLoreEntry[]): string {
  if (entries.length === 0) return '';
  return `${title}:\n\n${[...entries]
    .sort(byOrderThenId)
    .map((e) => e.content.trim())
    .join('\n\n')}`;
}

/** Spec §6: a topic, its description and required fields; the complete schema where references force it; the marker for an unreadable one. */
function eventLine(e: EventCatalogEntry, t: ReturnType<typeof fixedText>): string {
  const line = `- ${e.topic}: ${e.description}${e.requiredFields.length ? ` (${t.eventRequired}: ${e.requiredFields.join(', ')})` : ''}`;
  if (e.schemaUnavailable) return `${line} ${SCHEMA_UNAVAILABLE}`;
  return e.payloadSchema !== undefined ? `${line}\n  ${t.eventPayloadSchema}: ${e.payloadSchema}` : line;
}

/** The marker of an event whose payload schema cannot be read (markers are not translated). */
export const SCHEMA_UNAVAILABLE = '[payload schema unavailable]';

/** Spec §2: the system prompt's sections, in order (empty ones are kept here, skipped when serialized). */
export function systemSections(input: SystemPromptInput): SystemSection[] {
  const t = fixedText(input.locale);
  const events =
    input.eventCatalog.length === 0
      ? ''
      : `<available-events>\n${escapeXml([t.eventsTitle, ...input.eventCatalog.map((e) => eventLine(e, t))].join('\n'))}\n</available-events>`;
  // activations that run within a stage are the same every turn: they stay in the system prompt
  const inStage =
    input.activation?.kind === 'stage' ? `<runtime-activation>\n${escapeXml(t.activationStage(input.activation.stage))}\n</runtime-activation>` : '';
  return [
    { name: 'preamble', text: input.preamble },
    { name: 'runtime-body', text: input.body.trim() },
    { name: 'segments', text: input.segments.map((s) => s.content).join('\n\n') },
    {
      name: 'worldinfo-before',
      text: worldInfo(
        t.worldInfoTitle,
        input.lorebook.filter((e) => e.position === 'before-plugin'),
      ),
    },
    { name: 'events-activation', text: [events, inStage].filter(Boolean).join('\n\n') },
    {
      name: 'worldinfo-after',
      text: worldInfo(
        t.worldInfoTitle,
        input.lorebook.filter((e) => e.position === 'after-plugin'),
      ),
    },
    { name: 'turn-segments', text: input.turnSegments.map((s) => s.content).join('\n\n') },
  ];
}
