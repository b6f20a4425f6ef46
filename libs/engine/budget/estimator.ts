import { estimateTokens, type Estimator } from '../../context';
import { type SlotConfig, slotTokenizer } from '../../providers';

/** The budget's estimator for a slot's model: its tokenizer when llm.toml names one, else the spec's character estimate. */
export async function slotEstimator(slot: Pick<SlotConfig, 'tokenizer'>): Promise<Estimator> {
  return (await slotTokenizer(slot)) ?? estimateTokens;
}

/** How the worker keeps the figures of long texts between requests (`rememberingEstimator`). */
export interface KeptEstimatesOptions {
  /** Texts at least this long (UTF-16 units) are kept; shorter ones are counted again (cheaper than keeping them). */
  fromChars: number;
  /** The kept texts' lengths summed, at most: keeping one more forgets the oldest kept first. */
  maxChars: number;
}

/**
 * One estimator's figures of long texts, kept across requests: the requests of a turn (every
 * runtime's, each agent step's, the compaction barrier's estimate) send the same system prompt and
 * history texts, some tens of thousands of characters each (issue 33); a kept figure is found by
 * the text's hash, the text is not scanned again. At most `maxChars` characters are held, the
 * oldest kept forgotten first. Same figures: an estimator is a pure function of its text.
 */
export class KeptEstimates {
  private readonly figures = new Map<string, number>();
  private chars = 0;

  constructor(readonly options: KeptEstimatesOptions) {}

  /** The figure of a text long enough to be kept, counted with `estimator` unless kept; a shorter one: undefined. */
  estimate(text: string, estimator: Estimator): number | undefined {
    if (text.length < this.options.fromChars) return undefined;
    const kept = this.figures.get(text);
    if (kept !== undefined) return kept;
    const tokens = estimator(text);
    if (text.length <= this.options.maxChars) {
      for (const old of this.figures.keys()) {
        if (this.chars + text.length <= this.options.maxChars) break;
        this.figures.delete(old);
        this.chars -= old.length;
      }
      this.figures.set(text, tokens);
      this.chars += text.length;
    }
    return tokens;
  }
}

/** The worker's kept figures per estimator (a slot's tokenizer is one function per name, `slotTokenizer`). */
const keptPerEstimator = new WeakMap<Estimator, KeptEstimates>();
/** Long texts: a system prompt, a history message; about 8 MB of text held per estimator at most. */
const WORKER_KEPT: KeptEstimatesOptions = { fromChars: 512, maxChars: 4_000_000 };

/**
 * `estimator` with its answers kept, by text, for as long as the returned function is held (one
 * request): a request's budget is checked up to three times (spec §5: at assembly, after the
 * PostContextAssembly hooks, on the request as sent), each over the same system prompt and history
 * texts. Long texts' figures are also kept between requests (`KeptEstimates`, the worker's per
 * estimator unless `kept` is given). Same figures: an estimator is a pure function of its text.
 */
export function rememberingEstimator(estimator: Estimator, kept: KeptEstimates = workerKept(estimator)): Estimator {
  const counted = new Map<string, number>();
  return (text) => {
    let tokens = counted.get(text);
    if (tokens === undefined) {
      tokens = kept.estimate(text, estimator) ?? estimator(text);
      counted.set(text, tokens);
    }
    return tokens;
  };
}

function workerKept(estimator: Estimator): KeptEstimates {
  let kept = keptPerEstimator.get(estimator);
  if (!kept) keptPerEstimator.set(estimator, (kept = new KeptEstimates(WORKER_KEPT)));
  return kept;
}
