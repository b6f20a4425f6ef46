import { z } from 'zod';
import { EngineError } from '../../errors';
import type { EventData } from '../../events';

/** What an emitted event (or a manual activation) carries: the payload of the `runtime.activated@1` it starts. */
export type ActivationPayload = EventData<'runtime.activated@1'>['payload'];

/** Largest payload of one emitted event, as JSON text (the same limit as a manual activation's payload). */
export const MAX_EMITTED_PAYLOAD_CHARS = 16_000;
/** How many events one run may emit. */
export const MAX_EMISSIONS_PER_RUN = 100;

/** A `ctx.emit` the plugin may not make: an undeclared topic, a payload that is not JSON or too big, an emission after the run. */
export class EventEmissionRefusedError extends EngineError {
  readonly code = 'PLUGIN_EMIT_REFUSED';
  readonly category = 'invalid';
  constructor(pluginId: string, detail: string) {
    super(`plugin ${pluginId}: ctx.emit ${detail}`);
  }
}

const Payload = z.json();

/**
 * The events one function runtime's run emits (`ctx.emit(topic, payload)`, PLUGIN-API.md): kept
 * until the run returns, then appended with its output in one append (as `runtime.activated@1` of
 * each runtime the topic triggers), so a failed run emits nothing and a retried one cannot emit
 * twice. A topic must be one a loaded plugin declares in `contributes.events`.
 */
export class EmissionBuffer {
  private readonly emitted: { topic: string; payload: ActivationPayload }[] = [];
  private closed = false;

  constructor(
    private readonly pluginId: string,
    private readonly declaredTopics: ReadonlySet<string>,
  ) {}

  emit(topic: unknown, payload: unknown = {}): void {
    const refuse = (detail: string) => new EventEmissionRefusedError(this.pluginId, detail);
    if (this.closed) throw refuse('after the run ended: nothing is emitted');
    if (typeof topic !== 'string' || !this.declaredTopics.has(topic))
      throw refuse(`(${JSON.stringify(topic)}): not a topic any loaded plugin declares in contributes.events`);
    const parsed = Payload.safeParse(payload);
    if (!parsed.success) throw refuse(`(${topic}): the payload is not JSON`);
    if (JSON.stringify(parsed.data).length > MAX_EMITTED_PAYLOAD_CHARS)
      throw refuse(`(${topic}): the payload is over ${MAX_EMITTED_PAYLOAD_CHARS} characters as JSON`);
    if (this.emitted.length >= MAX_EMISSIONS_PER_RUN) throw refuse(`(${topic}): more than ${MAX_EMISSIONS_PER_RUN} events in one run`);
    this.emitted.push({ topic, payload: structuredClone(parsed.data) as ActivationPayload });
  }

  close(): void {
    this.closed = true;
  }

  emissions(): readonly { topic: string; payload: ActivationPayload }[] {
    return this.emitted;
  }
}
