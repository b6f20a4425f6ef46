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
    const { hash, key } = keyOf(entry, input);
    let text = this.recorded.get(key) ?? this.mine.get(key);
    if (text === undefined) {
      // the handler's ctx.services resolves through here: those results are recorded and reused too
      text = await this.invoke(entry, input, { resolveService: (provider, given) => this.resolve(provider, given) });
      this.mine.set(key, text);
      this.fresh.push({ key, point: pointOf(entry), pluginId: entry.pluginId, extensionId: entry.id, inputHash: hash, result: text });
    }
    return JSON.parse(text) as unknown;
  }
}

/** The audit's and replay's resolver: recorded results only; no handler ever runs. */
export class RecordedResolver implements ExtensionResolver {
  constructor(
    private readonly executionId: string,
    private readonly recorded: ReadonlyMap<string, string>,
  ) {}

  async resolve(entry: Registered, input: unknown): Promise<unknown> {
    const text = this.recorded.get(keyOf(entry, input).key);
    if (text === undefined)
      throw new RecordedExtensionMissingError({ executionId: this.executionId, pluginId: entry.pluginId, point: pointOf(entry), extensionId: entry.id });
    return JSON.parse(text) as unknown;
  }
}
