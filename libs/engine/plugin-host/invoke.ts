import type { z } from 'zod';
import { extensionResultSchemas, type HookContext, hookResultSchemas, type HookName, type LoadedPlugin } from '../../plugins-sdk';
import { PluginHandlerError } from '../errors';
import { deepFreeze, type ExecutionScope, handlerContext, type PluginDataSource } from './handler-context';
import type { ExtensionRegistry, RegisteredExtension, RegisteredHook } from './registry';
import { isServicePoint, serviceReader, type ServiceRun } from './services';
import { publishedCharacters } from './published-characters';
import { dottedPath } from '../../text';

/** What a hook is given to hash and to run: the payload and the runtime whose request it is. */
export interface HookInput {
  runtime: { pluginId: string; runtimeId: string };
  payload: unknown;
}

export type Registered = RegisteredExtension | RegisteredHook;

export const pointOf = (entry: Registered): string => ('point' in entry ? entry.point : entry.name);

/**
 * Runs one handler or hook on a copy of its input; resolves to its validated result as JSON text.
 * `resolveService`: how the handler's `ctx.services` resolves a provider (a resolver passes its own
 * `resolve`, so those results are recorded and reused too); default: the provider runs here.
 * `resolveShared`: the same results read-only and shared (`ExtensionResolver.resolveShared`), for
 * the host's own reads (the `session.world-context@1` characters of `ctx.world`); default: `resolveService`.
 */
export type Invoke = (entry: Registered, input: unknown, options?: { resolveService?: ServiceRun; resolveShared?: ServiceRun }) => Promise<string>;

/**
 * How long a handler's synchronous part may hold the event loop before a warning names the plugin
 * (`COVEL_PLUGIN_BLOCKING_WARN_MS`): while it runs, nothing else in the process does (the HTTP API of
 * `npm start` included).
 */
export interface BlockingWatch {
  thresholdMs: number;
  /** Called with the synchronous duration when it reached the threshold. */
  onBlocked(ms: number): void;
}

/**
 * Runs `fn` with a time limit. A handler cannot be cancelled: after the limit its result, whenever
 * it comes, is ignored (nothing is recorded from it and the runtime has failed already). Synchronous
 * code cannot be interrupted either (the timer cannot fire while it runs): its duration is measured,
 * reported to `blocking` past its threshold, and a synchronous part that ran past the limit counts as
 * timed out too.
 */
export async function within<T>(ms: number, fn: () => T | Promise<T>, onTimeout: () => Error, blocking?: BlockingWatch | null): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
    timer.unref?.();
  });
  const timed = () => {
    const started = performance.now();
    let syncMs = 0;
    let result: T | Promise<T>;
    try {
      result = fn();
    } finally {
      syncMs = performance.now() - started;
      if (blocking && syncMs >= blocking.thresholdMs) blocking.onBlocked(syncMs);
    }
    if (syncMs >= ms) throw onTimeout();
    return result;
  };
  try {
    return await Promise.race([Promise.resolve().then(timed), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where a handler's blocking is reported: the plugin, its point or hook, and the handler's id. */
export type BlockingReporter = (report: { pluginId: string; point: string; handlerId: string; ms: number }) => void;

/** A {@link BlockingWatch} for one handler, or null when nothing is reported. */
export const watchFor = (
  watch: { thresholdMs: number; report: BlockingReporter } | null | undefined,
  handler: { pluginId: string; point: string; handlerId: string },
): BlockingWatch | null => (watch ? { thresholdMs: watch.thresholdMs, onBlocked: (ms) => watch.report({ ...handler, ms }) } : null);

/** The issues, each at its path (a key that is not well-formed text as a JSON string: the message stays recordable). */
const issuesOf = (error: z.ZodError) => error.issues.map((i) => `${dottedPath(i.path) || '(root)'}: ${i.message}`).join('; ');

/** The invoker of one execution: handlers get the execution's context, a time limit, and their schema. */
export function executionInvoker(
  scope: ExecutionScope,
  options: {
    timeoutMs: number;
    pluginData: PluginDataSource;
    plugins?: ReadonlyMap<string, LoadedPlugin>;
    registry?: ExtensionRegistry;
    blocking?: { thresholdMs: number; report: BlockingReporter } | null;
  },
): Invoke {
  const invoke: Invoke = async (entry, input, invokeOptions) => {
    const point = pointOf(entry);
    // a service provider gets no ctx.services (no nesting, so no cycle)
    const run: ServiceRun | null = isServicePoint(point)
      ? null
      : (invokeOptions?.resolveService ?? (async (provider, given) => JSON.parse(await invoke(provider, given)) as unknown));
    const services = serviceReader({
      pluginId: entry.pluginId,
      registry: options.registry ?? null,
      run,
      refusal: run ? 'no extension registry here' : `a provider of a service point (${point}) cannot call ctx.services`,
    });
    // ctx.world's characters as the session.world-context@1 providers publish them (a provider itself sees the world's);
    // read only, so from the shared results: the same results give the same characters, made once (`publishedCharacters`)
    const resolveRun =
      invokeOptions?.resolveShared ?? invokeOptions?.resolveService ?? (async (provider, given) => JSON.parse(await invoke(provider, given)) as unknown);
    const characters = options.registry && point !== 'session.world-context@1' ? await publishedCharacters(options.registry, resolveRun, scope.world) : null;
    const ctx = handlerContext(
      characters ? { ...scope, characters } : scope,
      entry.pluginId,
      options.pluginData,
      options.plugins?.get(entry.pluginId),
      services,
    );
    const failure = (kind: 'threw' | 'timed-out' | 'invalid-result', detail: string, cause?: unknown) =>
      new PluginHandlerError(kind, entry.pluginId, point, entry.id, detail, cause === undefined ? undefined : { cause });
    const given = structuredClone(input);
    let raw: unknown;
    try {
      raw = await within(
        options.timeoutMs,
        () => {
          if ('point' in entry) return entry.handler(given as never, ctx);
          const { runtime, payload } = given as HookInput;
          // spec §3: a hook's sources (template, input slots, character summary) are read-only
          if (entry.name === 'PostContextAssembly') deepFreeze((payload as { sources?: unknown }).sources);
          const hookCtx: HookContext = Object.freeze({ ...ctx, runtime: Object.freeze({ ...runtime }) });
          return entry.fn(payload as never, hookCtx);
        },
        () => failure('timed-out', `did not answer within ${options.timeoutMs} ms`),
        watchFor(options.blocking, { pluginId: entry.pluginId, point, handlerId: entry.id }),
      );
    } catch (error) {
      if (error instanceof PluginHandlerError) throw error;
      throw failure('threw', `threw: ${error instanceof Error ? error.message : String(error)}`, error);
    }
    const schema = 'point' in entry ? extensionResultSchemas[entry.point] : hookResultSchemas[entry.name as HookName];
    let parsed: ReturnType<typeof schema.safeParse>;
    try {
      parsed = schema.safeParse(raw);
    } catch (error) {
      // a value no schema check can walk (a getter that throws, say): refused like any invalid result
      throw failure('invalid-result', `returned a result that could not be checked: ${error instanceof Error ? error.message : String(error)}`, error);
    }
    if (!parsed.success) throw failure('invalid-result', `returned an invalid result: ${issuesOf(parsed.error)}`);
    let text: string | undefined;
    try {
      text = JSON.stringify(parsed.data ?? null);
    } catch (error) {
      throw failure('invalid-result', `returned a result that is not JSON: ${String(error)}`, error);
    }
    if (text === undefined) throw failure('invalid-result', 'returned a result that is not JSON');
    return text;
  };
  return invoke;
}
