import type { StoredEvent } from '../events';
import type { Locale } from '../plugins-sdk';
import { redactImageData, ProviderRegistry } from '../providers';
import { HistoryFold } from './history-fold';
import { executionOutputs, SessionJournal } from './journal';
import type { RuntimeCatalog } from './runtime-catalog';
import { buildRuntimeRequest } from './runtime-request';
import { staticSegments } from './static-segments';

export interface RebuiltCall {
  callId: string;
  executionId: string;
  turnId: string;
  pluginId: string;
  runtimeId: string;
  recorded: string;
  rebuilt: string;
  identical: boolean;
}

/**
 * Re-derives every recorded model request of a session from its events alone (the same inputs
 * the worker had: committed turns before the call, this execution's outputs so far) and compares
 * it with the bytes recorded in `llm.calling`.
 */
export async function rebuildRequests(
  events: readonly StoredEvent[],
  catalog: RuntimeCatalog,
  providers: ProviderRegistry,
  options: { historyReadLimit: number },
): Promise<RebuiltCall[]> {
  const journal = new SessionJournal();
  const history = new HistoryFold();
  let locale: Locale = 'en';
  const results: RebuiltCall[] = [];
  for (const event of events) {
    if (event.type === 'session.created@1') locale = event.data.locale;
    if (event.type === 'llm.calling@1') {
      const d = event.data;
      const execution = journal.get(d.executionId);
      const runtime = catalog.all().find((r) => r.pluginId === d.pluginId && r.manifest.id === d.runtimeId);
      if (!execution || !runtime) throw new Error(`call ${d.callId}: unknown execution or runtime ${d.pluginId}/${d.runtimeId}`);
      const { body } = await buildRuntimeRequest(
        {
          sessionId: event.streamId,
          locale,
          runtime,
          stageIndex: catalog.stageIndex(runtime),
          history: history.uncompactedTail(options.historyReadLimit),
          summaries: history.savedSummaries(),
          playerInput: execution.input,
          outputs: executionOutputs(execution, catalog),
          segments: staticSegments(catalog.plugins, locale),
        },
        providers,
      );
      const rebuilt = JSON.stringify(redactImageData(body));
      results.push({ callId: d.callId, executionId: d.executionId, turnId: d.turnId, pluginId: d.pluginId, runtimeId: d.runtimeId, recorded: d.body, rebuilt, identical: rebuilt === d.body });
    }
    history.apply(event);
    journal.apply([event]);
  }
  return results;
}
