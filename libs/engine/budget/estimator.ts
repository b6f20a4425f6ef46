import { estimateTokens, type Estimator } from '../../context';
import { TextMemo, type TextMemoOptions } from '../../memo';
import { type SlotConfig, slotTokenizer } from '../../providers';

/** The budget's estimator for a slot's model: its tokenizer when llm.toml names one, else the spec's character estimate. */
export async function slotEstimator(slot: Pick<SlotConfig, 'tokenizer'>): Promise<Estimator> {
  return (await slotTokenizer(slot)) ?? estimateTokens;
}

/** The worker's figures of long texts per estimator, kept across requests (a slot's tokenizer is one function per name, `slotTokenizer`). */
const keptPerEstimator = new WeakMap<Estimator, TextMemo<number>>();
/** Long texts (a system prompt, a history message): about 8 MB of text held per estimator at most. */
const WORKER_KEPT: TextMemoOptions = { fromChars: 512, maxChars: 4_000_000 };

/**
 * `estimator` with its answers kept, by text, for as long as the returned function is held (one
 * request): a request's budget is checked up to three times (spec §5: at assembly, after the
 * PostContextAssembly hooks, on the request as sent), each over the same system prompt and history
 * texts. Long texts' figures are also kept between requests (`kept`: the worker's per estimator by
 * default): the requests of a turn (every runtime's, each agent step's, the compaction barrier's
 * estimate) send the same system prompts and history messages (issue 33). Same figures: an
 * estimator is a pure function of its text.
 */
export function rememberingEstimator(estimator: Estimator, kept: TextMemo<number> = workerKept(estimator)): Estimator {
  const counted = new Map<string, number>();
  return (text) => {
    let tokens = counted.get(text);
    if (tokens === undefined) {
      tokens = kept.answer(text, estimator);
      counted.set(text, tokens);
    }
    return tokens;
  };
}

function workerKept(estimator: Estimator): TextMemo<number> {
  let kept = keptPerEstimator.get(estimator);
  if (!kept) keptPerEstimator.set(estimator, (kept = new TextMemo(WORKER_KEPT)));
  return kept;
}
