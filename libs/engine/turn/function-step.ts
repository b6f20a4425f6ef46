import { z } from 'zod';
import type { FunctionContext } from '../../plugins-sdk';
import { runtimeKey } from '../journal/journal';
import { FunctionRuntimeError } from '../plugin-host/plugin-data-errors';
import { type ExecutionScope, handlerContext } from '../plugin-host/handler-context';
import { within } from '../plugin-host/invoke';
import { inSpan, SPAN } from '../../telemetry';
import { changeEvent, PluginDataBuffer, type PluginDataChange } from '../plugin-host/plugin-data-buffer';
import { pluginDataAt } from '../plugin-host/journal-plugin-data';
import { storePluginData } from '../plugin-host/store-plugin-data';
import { executionServices } from '../plugin-host/execution-services';
import type { RuntimeJob } from '../queue';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import type { TurnDeps } from '../execution/deps';
import type { ExecutionRun } from '../execution/fenced-append';
import { recordRuntimeOutput } from '../execution/record-output';
import { type ActivationPayload, emittedEventActivations } from '../activations/activation-events';
import { EmissionBuffer } from '../plugin-host/event-emissions';
import { AssetBuffer, assetEvents, type GeneratedAsset, storeAssets } from '../plugin-host/asset-buffer';
import { NoMediaStoreError } from '../errors';
import { checkedEmit, declaredEvents } from '../tools';

/** Largest output a function may return, as UTF-8 JSON text. */
export const MAX_FUNCTION_OUTPUT_BYTES = 4 * 1024 * 1024;

const JsonResult = z.json();

export interface FunctionStepArgs {
  job: RuntimeJob;
  run: ExecutionRun;
  runtime: CatalogRuntime;
  /** The plugin catalog of the generation the execution captured (`executionCatalog`). */
  catalog: RuntimeCatalog;
  scope: ExecutionScope;
  /** `ctx.inputs`: the runtime's resolved `io.inputs` values (`functionInputs`). */
  inputs?: Readonly<Record<string, unknown>>;
}

/**
 * One `type: function` runtime of one attempt: runs the plugin's `api.runFunction` code once with
 * the handler context, its inputs and `ctx.pluginData` (reads of the plugin's own data, writes kept
 * in a buffer) and `ctx.assets` (kept too; their bytes stored once it succeeded), within the handler time limit; its result must be JSON (the output text is its JSON
 * text). The writes are appended with `runtime.output.produced@1` (and the turn's commit when this
 * output completes the last stage) in one append: a crash leaves all of them or none, a failed
 * function none. An execution that has the output never runs the function again (nor does replay).
 */
export async function runFunctionStep(deps: TurnDeps, args: FunctionStepArgs): Promise<'produced' | 'reused'> {
  const { job, run, runtime, catalog } = args;
  const { text, changes, emissions, assets } = await inSpan(SPAN.functionCall, {}, () => runFunction(deps, args));
  // the bytes first: the events that reference them are appended only after they are stored
  if (assets.length > 0) {
    if (!deps.media) throw new NoMediaStoreError(job.pluginId);
    await storeAssets(deps.media, { tenantId: job.tenantId, sessionId: job.sessionId }, assets);
  }
  // a copy of this job that recorded first: its output and writes stand, ours are dropped
  return recordRuntimeOutput({
    deps,
    job,
    run,
    runtime,
    catalog,
    text,
    effects: (current) => ({
      before: [
        ...changes.map((c) => changeEvent({ executionId: job.executionId, turnId: current.turnId, attempt: job.attempt, pluginId: job.pluginId }, c)),
        ...assetEvents(
          { executionId: job.executionId, turnId: current.turnId, attempt: job.attempt, pluginId: job.pluginId, runtimeId: runtime.runtimeId },
          args.scope.locale,
          assets,
        ),
      ],
      // each emitted event starts its followers as activations, pending after this execution
      after: emissions.flatMap((e) => emittedEventActivations(catalog, e).events),
    }),
  });
}

/** Runs the function; resolves to its output text and the rows it changed, or throws `FunctionRuntimeError`. */
async function runFunction(
  deps: TurnDeps,
  args: FunctionStepArgs,
): Promise<{
  text: string;
  changes: PluginDataChange[];
  emissions: readonly { topic: string; payload: ActivationPayload }[];
  assets: readonly GeneratedAsset[];
}> {
  const { job, runtime } = args;
  const fail = (failure: FunctionRuntimeError['failure'], detail: string, cause?: unknown) =>
    new FunctionRuntimeError({ failure, pluginId: job.pluginId, runtimeId: runtime.runtimeId, detail, cause });
  const registered = args.catalog.host.registry.functions.get(runtimeKey(job.pluginId, runtime.runtimeId));
  if (!registered) throw fail('not-registered', "has no api.runFunction registration in the plugin's server entry");
  const host = args.catalog.host;
  // reads at the journal's plugin-data version the stage's other runs made are answered once (`pluginDataAt`)
  const pluginData = pluginDataAt(deps.pluginData, args.run.journal);
  const source = storePluginData(pluginData);
  const scope = { tenantId: job.tenantId, sessionId: job.sessionId, pluginId: job.pluginId };
  const buffer = new PluginDataBuffer(job.pluginId, pluginData.scope(scope));
  const services = executionServices({ pluginId: job.pluginId, host, scope: args.scope, pluginData: source, recorded: args.run.execution.extensionResults });
  const base = handlerContext(args.scope, job.pluginId, source, undefined, services);
  const events = new Map(declaredEvents(args.catalog.plugins).map((e) => [e.topic, e]));
  const emissions = new EmissionBuffer(job.pluginId, new Set(events.keys()));
  const emit = checkedEmit(emissions, events); // the payload is checked against the topic's schema, as for tools
  const assets = new AssetBuffer(job.pluginId);
  const ctx: FunctionContext = Object.freeze({
    ...base,
    inputs: Object.freeze(structuredClone(args.inputs ?? {})),
    pluginData: buffer.writer(),
    emit: (topic: string, payload?: unknown) => emit(topic, payload),
    assets: assets.assets(),
  });
  let raw: unknown;
  try {
    raw = await within(
      host.handlerTimeoutMs,
      () => registered.fn(ctx),
      () => fail('timed-out', `did not answer within ${host.handlerTimeoutMs} ms`),
      host.blockingWatch({ pluginId: job.pluginId, point: 'runFunction', handlerId: runtime.runtimeId }),
    );
  } catch (error) {
    if (error instanceof FunctionRuntimeError) throw error;
    throw fail('threw', `threw: ${error instanceof Error ? error.message : String(error)}`, error);
  } finally {
    buffer.close(); // a write (or an emission) after the end or the time limit throws and is never stored
    emissions.close();
    assets.close();
  }
  const parsed = JsonResult.safeParse(raw === undefined ? null : raw);
  if (!parsed.success)
    throw fail(
      'invalid-result',
      `returned a value that is not JSON: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  const text = JSON.stringify(parsed.data);
  if (Buffer.byteLength(text, 'utf8') > MAX_FUNCTION_OUTPUT_BYTES)
    throw fail('invalid-result', `returned more than ${MAX_FUNCTION_OUTPUT_BYTES} bytes of JSON`);
  return { text, changes: buffer.changes(), emissions: emissions.emissions(), assets: assets.submitted() };
}
