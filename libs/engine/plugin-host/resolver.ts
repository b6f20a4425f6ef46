import { BoundedMemo, deepFreeze } from '../../memo';
import { RecordedExtensionMissingError } from '../errors';
import { inputHash, resultKey } from '../journal/input-hash';
import { type Invoke, pointOf, type Registered } from './invoke';

/** A handler result to record (`extension.resolved@1`), with the key it is found by. */
export interface FreshResult {
  key: string;
  point: string;
  pluginId: string;
  extensionId: string;
  inputHash: string;
  /** The validated result as JSON text. */
  result: string;
}

/** Turns a registered handler or hook and its input into its result, for one runtime's request. */
export interface ExtensionResolver {
  resolve(entry: Registered, input: unknown): Promise<unknown>;
  /**
   * The same result read-only: deep-frozen, and shared with every other caller that resolves the
   * same recorded text in this process (`sharedResult`). For the engine's own reads, which never
   * change what they are given (a request's segments, its world context); what reaches plugin code
   * (`ctx.services`) is `resolve`'s own copy. Absent: `resolve`.
   */
  resolveShared?(entry: Registered, input: unknown): Promise<unknown>;
}

/** `resolver.resolveShared`, or `resolve` for a resolver without it. */
export function resolveShared(resolver: ExtensionResolver, entry: Registered, input: unknown): Promise<unknown> {
  return resolver.resolveShared ? resolver.resolveShared(entry, input) : resolver.resolve(entry, input);
}

/**
 * Results parsed from their JSON text, deep-frozen, by text: the runtimes of an execution read the
 * same recorded results (every runtime's request takes each `prompt.segment@1` provider's segments
 * and each `session.world-context@1` provider's world, with the same input), and each parsed them
 * again, ~165 KB of JSON per Emberback turn (issue 33). A value is `JSON.parse(text)` whichever
 * caller parsed it first, so a request built from it is the same bytes; frozen, no caller can
 * change it for another. At most `SHARED_RESULTS` texts, the oldest forgotten first.
 */
const SHARED_RESULTS = 128;
const sharedResults = new BoundedMemo<string, unknown>({ maxEntries: SHARED_RESULTS });

/** `JSON.parse(text)`, deep-frozen, shared (see `sharedResults`). */
export function sharedResult(text: string): unknown {
  if (sharedResults.has(text)) return sharedResults.get(text);
  const value = deepFreeze(JSON.parse(text) as unknown);
  sharedResults.set(text, value);
  return value;
}

function keyOf(entry: Registered, input: unknown) {
  const hash = inputHash(input);
  return { hash, key: resultKey(pointOf(entry), entry.pluginId, entry.id, hash) };
}

/**
 * The worker's resolver: a result this execution recorded already (the journal's, any runtime or
 * attempt) is reused; otherwise the handler runs once and its result is kept to be recorded before
 * `llm.calling`. Either way the value used is the JSON text's parse, exactly what a rebuild reads.
 */
export class LiveResolver implements ExtensionResolver {
  readonly fresh: FreshResult[] = [];
  private readonly mine = new Map<string, string>();

  constructor(
    private readonly recorded: ReadonlyMap<string, string>,
    private readonly invoke: Invoke,
  ) {}

  async resolve(entry: Registered, input: unknown): Promise<unknown> {
    return JSON.parse(await this.text(entry, input)) as unknown;
  }

  async resolveShared(entry: Registered, input: unknown): Promise<unknown> {
    return sharedResult(await this.text(entry, input));
  }

  private async text(entry: Registered, input: unknown): Promise<string> {
    const { hash, key } = keyOf(entry, input);
    let text = this.recorded.get(key) ?? this.mine.get(key);
    if (text === undefined) {
      // the handler's ctx.services resolves through here: those results are recorded and reused too
      text = await this.invoke(entry, input, {
        resolveService: (provider, given) => this.resolve(provider, given),
        resolveShared: (provider, given) => this.resolveShared(provider, given),
      });
      this.mine.set(key, text);
      this.fresh.push({ key, point: pointOf(entry), pluginId: entry.pluginId, extensionId: entry.id, inputHash: hash, result: text });
    }
    return text;
  }
}

/** The audit's and replay's resolver: recorded results only; no handler ever runs. */
export class RecordedResolver implements ExtensionResolver {
  constructor(
    private readonly executionId: string,
    private readonly recorded: ReadonlyMap<string, string>,
  ) {}

  async resolve(entry: Registered, input: unknown): Promise<unknown> {
    return JSON.parse(this.text(entry, input)) as unknown;
  }

  async resolveShared(entry: Registered, input: unknown): Promise<unknown> {
    return sharedResult(this.text(entry, input));
  }

  private text(entry: Registered, input: unknown): string {
    const text = this.recorded.get(keyOf(entry, input).key);
    if (text === undefined)
      throw new RecordedExtensionMissingError({ executionId: this.executionId, pluginId: entry.pluginId, point: pointOf(entry), extensionId: entry.id });
    return text;
  }
}
