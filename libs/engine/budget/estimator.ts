import { estimateTokens, type Estimator } from '../../context';
import { type SlotConfig, slotTokenizer } from '../../providers';

/** The budget's estimator for a slot's model: its tokenizer when llm.toml names one, else the spec's character estimate. */
export async function slotEstimator(slot: Pick<SlotConfig, 'tokenizer'>): Promise<Estimator> {
  return (await slotTokenizer(slot)) ?? estimateTokens;
}
