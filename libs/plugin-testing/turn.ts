import type { CommittedMessage, EventData, StoredEvent } from '../events';
import { truncateText } from '../text';
import { HarnessLookupError } from './errors';
import type { RequestView } from './request-view';

/** A runtime's output in this turn (`runtime.output.produced@1`). */
export interface OutputView {
  pluginId: string;
  runtimeId: string;
  stage: string | null;
  outputKind: 'story' | 'structured' | 'none';
  text: string;
}

/**
 * One turn the harness ran, read from the log once it ended: its events, the requests of its
 * runtimes, their outputs and the committed story. Everything here was recorded by the engine.
 */
export class HarnessTurn {
  readonly status: 'committed' | 'failed';
  /** The recorded error of a failed turn (`execution.failed@1`). */
  readonly failure: { code: string; message: string } | null;
  /** The committed messages (`turn.committed@1`); empty for a failed turn. */
  readonly committed: readonly CommittedMessage[];

  constructor(
    readonly sessionId: string,
    readonly executionId: string,
    readonly turnId: string,
    /** This turn's events in log order (those of its execution). */
    readonly events: readonly StoredEvent[],
    /** The model requests of this turn, in the order they were recorded. */
    readonly requests: readonly RequestView[],
  ) {
    const failed = events.find((e) => e.type === 'execution.failed@1');
    const commit = events.find((e) => e.type === 'turn.committed@1');
    this.status = commit ? 'committed' : 'failed';
    this.failure = failed ? (failed.data as EventData<'execution.failed@1'>).error : null;
    this.committed = commit ? (commit.data as EventData<'turn.committed@1'>).messages : [];
  }

  /** The committed story text: the story runtimes' messages of the turn, joined by a blank line. */
  get story(): string {
    return this.committed
      .filter((m) => m.outputKind === 'story')
      .map((m) => m.text)
      .join('\n\n');
  }

  /** Every runtime output of the turn, in the order they were recorded. */
  get outputs(): readonly OutputView[] {
    return this.events
      .filter((e) => e.type === 'runtime.output.produced@1')
      .map((e) => {
        const d = e.data as EventData<'runtime.output.produced@1'>;
        return { pluginId: d.pluginId, runtimeId: d.runtimeId, stage: d.stage, outputKind: d.outputKind, text: d.text };
      });
  }

  /** The events of one type (`'extension.resolved@1'`, `'plugin-data.written@1'`, …), their data in log order. */
  eventsOf<T extends StoredEvent['type']>(type: T): EventData<T>[] {
    return this.events.filter((e) => e.type === type).map((e) => e.data as EventData<T>);
  }

  /** The output text of a runtime, or undefined when it produced none this turn. `runtimeId` defaults to the plugin id (an inline runtime). */
  output(pluginId: string, runtimeId: string = pluginId): string | undefined {
    return this.outputs.find((o) => o.pluginId === pluginId && o.runtimeId === runtimeId)?.text;
  }

  /** A runtime's output parsed as JSON; throws `HarnessLookupError` when there is none or it is not JSON. */
  outputJson(pluginId: string, runtimeId: string = pluginId): unknown {
    const text = this.output(pluginId, runtimeId);
    if (text === undefined) throw new HarnessLookupError(`${pluginId}/${runtimeId} produced no output in this turn`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new HarnessLookupError(`the output of ${pluginId}/${runtimeId} is not JSON: ${JSON.stringify(truncateText(text, 200))}`);
    }
  }

  /** Every request a runtime made this turn (an agent may make several). */
  requestsOf(pluginId: string, runtimeId: string = pluginId): readonly RequestView[] {
    return this.requests.filter((r) => r.pluginId === pluginId && r.runtimeId === runtimeId);
  }

  /** A runtime's (first) request this turn; throws `HarnessLookupError`, listing the runtimes that made one, when it made none. */
  request(pluginId: string, runtimeId: string = pluginId): RequestView {
    const found = this.requestsOf(pluginId, runtimeId)[0];
    if (found) return found;
    const made = [...new Set(this.requests.map((r) => `${r.pluginId}/${r.runtimeId}`))].sort().join(', ') || 'none';
    throw new HarnessLookupError(`${pluginId}/${runtimeId} made no model request in this turn (requests by: ${made})`);
  }

  /** The cached input tokens the provider reported for one of this turn's requests (`llm.responded@1` usage), or undefined when it reported none. */
  cachedTokens(request: RequestView): number | undefined {
    return this.eventsOf('llm.responded@1').find((e) => e.callId === request.callId)?.usage.cachedInputTokens;
  }

  /**
   * The player-facing summaries of this turn's successful calls of a tool, in log order: each
   * result's `data.summary` (undefined for a call that returned none, e.g. "no change").
   */
  toolSummaries(tool: string): (string | undefined)[] {
    return this.eventsOf('tool.completed@1')
      .filter((e) => e.name === tool && e.ok)
      .map((e) => (JSON.parse(e.content) as { data: { summary?: string } }).data.summary);
  }
}
