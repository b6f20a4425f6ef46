import { randomUUID } from 'node:crypto';
import { redactImageData } from '../../providers';
import { ExtensionResultRaceError, RuntimeNotFoundError } from '../errors';
import { storePluginData } from '../plugin-host/store-plugin-data';
import { readSelfData, selfDataUnchanged } from '../self-data';
import { runFunctionStep } from './function-step';
import { loadRuntimeHistory } from '../history-loader';
import { executionOutputs, type RuntimeOutput, runtimeKey } from '../journal';
import type { RuntimeJob } from '../queue';
import { buildRuntimeRequest, requestLayout } from '../runtime-request';
import { advertisedEvents } from '../tools/event-catalog';
import { staticSegments } from '../static-segments';
import { commitEvent, missingRuntimes } from './commit';
import { historyReadLimit, type TurnDeps } from './deps';
import { ExecutionRun, isCurrentAttempt } from './fenced-append';
import { handOff } from './hand-off';
import { loadSessionJournal, loadSessionSettings } from './session-reads';
import { LiveResolver } from '../plugin-host/resolver';
import { executionRequestInputs, functionInputs } from '../inputs';
import { turnNumberOf } from '../runtime-template';
import { executionCatalog } from '../catalog-generations';

/** produced: this job called the model and recorded the output; reused: an earlier job had; fenced: not this attempt's to run. */
export type RuntimeStepResult = 'produced' | 'reused' | 'fenced';

/**
 * One runtime of one attempt: rebuilds the journal, checks the fence, reuses an output already
 * produced, else builds the request from the log's state (the same inputs a rebuild from the events
 * uses), records `llm.calling`, calls the model and records `llm.responded` with the output.
 * The output is recorded once per execution and runtime: a copy of this job that ran at the same
 * time (a lost lock) and recorded first wins, this one records only its response.
 * The output that completes the last stage commits the turn in the same append (one transaction
 * instead of two, and no wait for the turn job to wake), and the session is handed off from here;
 * the turn job then only finds the execution ended.
 */
export async function runRuntimeStep(deps: TurnDeps, job: RuntimeJob): Promise<RuntimeStepResult> {
  const journal = await loadSessionJournal(deps, job.sessionId);
  if (!isCurrentAttempt(journal.get(job.executionId), job.attempt)) return 'fenced';
  const catalog = executionCatalog(deps, journal.get(job.executionId)); // the generation the execution captured
  const runtime = catalog.find(job.pluginId, job.runtimeId);
  if (!runtime) throw new RuntimeNotFoundError(job.pluginId, job.runtimeId);
  const key = runtimeKey(job.pluginId, job.runtimeId);
  const run = new ExecutionRun(deps.store, journal, job, job.attempt);
  if (run.execution.outputs.has(key)) return 'reused'; // produced by an earlier job or attempt: never called again
  const [{ locale, world, pluginSettings }, history] = await Promise.all([
    loadSessionSettings(deps, job.sessionId),
    loadRuntimeHistory(deps.readModels, job.tenantId, job.sessionId, historyReadLimit(deps)),
  ]);
  const m = runtime.manifest;
  const execution = run.execution;
  const host = catalog.host;
  const scope = { tenantId: job.tenantId, sessionId: job.sessionId, turnNumber: turnNumberOf(history.messages), locale, world, pluginSettings };
  if (m.type === 'function') return runFunctionStep(deps, { job, run, runtime, catalog, scope, inputs: functionInputs(catalog, runtime, execution) });
  // the plugin data version the selfData read saw at the latest: the call is not recorded if it moved
  const dataVersion = run.journal.pluginDataVersion;
  const selfData = await readSelfData(deps.pluginData, { tenantId: job.tenantId, sessionId: job.sessionId, pluginId: job.pluginId }, m.io.selfData);
  // results this execution recorded already are reused; a handler runs only for a new input
  const resolver = new LiveResolver(execution.extensionResults, host.invoker(scope, storePluginData(deps.pluginData)));
  const { body, slot, adapter, context } = await buildRuntimeRequest(
    {
      sessionId: job.sessionId,
      locale,
      runtime,
      stageIndex: catalog.stageIndex(runtime),
      history: history.messages,
      summaries: history.summaries,
      playerInput: execution.input,
      outputs: executionOutputs(execution, catalog),
      segments: staticSegments(catalog.plugins, locale),
      world,
      scanTail: history.scanTail,
      selfData,
      ...executionRequestInputs(catalog, runtime, execution),
      pluginSettings,
      lastFormValues: execution.lastFormValues ?? {},
      eventCatalog: advertisedEvents(catalog, runtime),
    },
    deps.providers,
    { registry: host.registry, resolver },
  );
  const ids = { executionId: job.executionId, turnId: execution.turnId, callId: randomUUID(), pluginId: job.pluginId, runtimeId: runtime.runtimeId };
  const recorded = JSON.stringify(redactImageData(body));
  await run.append((current) => [
    ...selfDataUnchanged(run.journal, { job, read: selfData.length > 0, dataVersion }),
    // recorded with the call that used them (one append, before the call); a result another job of
    // the execution recorded first (a copy of this job, a lost lock) is kept, and when it differs
    // from ours this request is not what the log would rebuild: not sent, the job is tried again
    ...resolver.fresh
      .map((r) => {
        const first = current.extensionResults.get(r.key);
        if (first !== undefined && first !== r.result)
          throw new ExtensionResultRaceError({ executionId: job.executionId, pluginId: r.pluginId, point: r.point, extensionId: r.extensionId });
        return r;
      })
      .filter((r) => !current.extensionResults.has(r.key))
      .map((r) => ({
        type: 'extension.resolved@1' as const,
        data: {
          executionId: ids.executionId,
          turnId: ids.turnId,
          attempt: job.attempt,
          point: r.point,
          pluginId: r.pluginId,
          extensionId: r.extensionId,
          inputHash: r.inputHash,
          result: r.result,
        },
      })),
    {
      type: 'llm.calling@1',
      data: { ...ids, attempt: job.attempt, provider: adapter.protocol, model: slot.model, body: recorded, layout: requestLayout(context) },
    },
  ]);
  const response = await adapter.send(body);
  let produced = false;
  let committed = false;
  await run.append((current) => {
    produced = !current.outputs.has(key);
    const output: RuntimeOutput = {
      stage: runtime.stage,
      pluginId: job.pluginId,
      runtimeId: runtime.runtimeId,
      outputKind: m.outputKind,
      messageId: randomUUID(),
      text: response.text,
      attempt: job.attempt,
    };
    const outputs = new Map(current.outputs).set(key, output);
    committed = produced && missingRuntimes(catalog, outputs, current.activation).length === 0;
    return [
      { type: 'llm.responded@1', data: { ...ids, finishReason: response.finishReason, usage: response.usage } },
      ...(produced
        ? [
            {
              type: 'runtime.output.produced@1' as const,
              data: {
                executionId: ids.executionId,
                turnId: ids.turnId,
                attempt: output.attempt,
                stage: output.stage,
                pluginId: output.pluginId,
                runtimeId: output.runtimeId,
                outputKind: output.outputKind,
                messageId: output.messageId,
                text: output.text,
              },
            },
          ]
        : []),
      ...(committed ? [commitEvent(catalog, { ...current, outputs }, job.attempt)] : []),
    ];
  });
  if (committed) await handOff(deps, job, run.journal);
  return produced ? 'produced' : 'reused';
}
