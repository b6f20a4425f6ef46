import { estimateTokens, type Estimator } from '../../context';
import { type SlotConfig, slotTokenizer } from '../../providers';

/** The budget's estimator for a slot's model: its tokenizer when llm.toml names one, else the spec's character estimate. */
export async function slotEstimator(slot: Pick<SlotConfig, 'tokenizer'>): Promise<Estimator> {
  return (await slotTokenizer(slot)) ?? estimateTokens;
}

/**
 * `estimator` with its answers kept, by text, for as long as the returned function is held (one
 * request): a request's budget is checked up to three times (spec §5: at assembly, after the
 * PostContextAssembly hooks, on the request as sent), each over the same system prompt and history
 * texts. Same figures: an estimator is a pure function of its text.
 */
export function rememberingEstimator(estimator: Estimator): Estimator {
  const counted = new Map<string, number>();
  return (text) => {
    let tokens = counted.get(text);
    if (tokens === undefined) {
      tokens = estimator(text);
      counted.set(text, tokens);
    }
    return tokens;
  };
}
