import { type ActivationPayload, MAX_EMITTED_PAYLOAD_CHARS } from '../plugin-host/event-emissions';
import type { DeclaredEvent } from './event-catalog';
import { checkSchema } from './json-schema';
import type { Tool } from './tool';
import { toolError, toolSuccess } from './tool-result';
import { EMIT_EVENT } from '../catalog/framework-tools';

/** A topic's payload shape in the tool definition: its schema, or a plain object where references or an unreadable schema force one. */
function payloadShape(e: DeclaredEvent): Record<string, unknown> {
  if (e.readable && !e.usesReferences) return e.payload;
  return { type: 'object', description: e.readable ? 'See this topic in <available-events> for its payload schema.' : 'Payload schema unavailable.' };
}

/**
 * `emit-event`: emits one domain event of the catalogue (`contributes.events` of the loaded
 * plugins). The definition lists the topics and, per topic, its payload shape. The payload is
 * checked against the topic's schema; a topic is emitted at most once per turn (the execution's
 * recorded emissions, `context.emittedTopics`). Each runtime the topic triggers then runs.
 */
export function emitEventTool(events: readonly DeclaredEvent[]): Tool {
  const byTopic = new Map(events.map((e) => [e.topic, e]));
  const topics = events.map((e) => e.topic);
  return {
    definition: {
      name: EMIT_EVENT,
      description:
        'Emit a domain event of this session: one call per event, each topic at most once per turn. Pick a topic and give its payload in the shape listed for that topic.',
      parameters: {
        type: 'object',
        properties: {
          topic: { type: 'string', enum: topics, description: 'The event topic.' },
          payload: { type: 'object', description: "The event's payload, in the shape of its topic." },
        },
        required: ['topic', 'payload'],
        additionalProperties: false,
        anyOf: events.map((e) => ({ properties: { topic: { const: e.topic }, payload: payloadShape(e) } })),
      },
    },
    argumentsSchema: {
      type: 'object',
      properties: { topic: { type: 'string' }, payload: {} },
      required: ['topic', 'payload'],
      additionalProperties: false,
    },
    async run(args, context) {
      const topic = args.topic as string;
      const event = byTopic.get(topic);
      if (!event) return toolError('EVENT_INVALID', `unknown topic "${topic}": the topics are ${topics.map((t) => `"${t}"`).join(', ') || '(none)'}`);
      if (context.emittedTopics.has(topic))
        return toolError('EVENT_ALREADY_EMITTED', `topic "${topic}" was emitted already in this turn: each topic is emitted at most once per turn`);
      const payload = args.payload;
      if (event.readable) {
        const check = checkSchema(event.payload, payload);
        if (!check.ok) return toolError('EVENT_INVALID', `the payload of "${topic}" does not match its schema: ${check.messages.join('; ')}`);
      }
      if (JSON.stringify(payload).length > MAX_EMITTED_PAYLOAD_CHARS)
        return toolError('EVENT_INVALID', `the payload of "${topic}" is over ${MAX_EMITTED_PAYLOAD_CHARS} characters as JSON`);
      const emissions = [{ topic, payload: structuredClone(payload) as ActivationPayload }];
      return toolSuccess({ emitted: topic }, { emissions, locale: context.scope.locale });
    },
  };
}
