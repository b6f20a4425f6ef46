import type { Locale, PluginHistoryMessage, PromptLoader } from '../../../libs/plugins-sdk';

/** The plugin's templates (prompts/server, English default + zh-Hans): a system prompt and a user prompt per kind of call. */
export const TEMPLATE_NAMES = ['segment-system', 'segment-prompt', 'merge-system', 'merge-prompt'] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

export interface SummaryRequestText {
  readonly system: string;
  readonly prompt: string;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9_.]*)\s*\}\}/g;

/** Fills `{{ name }}` once (a value's own braces stay as written); a placeholder without a value is a template error. */
export function fill(template: string, name: TemplateName, values: Readonly<Record<string, string>>): string {
  return template.replace(PLACEHOLDER, (_, key: string) => {
    if (!Object.hasOwn(values, key)) throw new Error(`history-compaction: template ${name} uses {{ ${key} }}, which the plugin does not fill`);
    return values[key];
  });
}

/**
 * How long a summary may be, as the template says it: English asks for words, Chinese for
 * characters (the framework's estimate counts a CJK character as one token, four other characters
 * as one; two words per three tokens keeps an English summary inside its budget).
 */
export function targetLength(tokens: number, locale: Locale): number {
  return Math.max(1, locale === 'zh-Hans' ? tokens : Math.floor((tokens * 2) / 3));
}

/** One message of the history to summarize; the text XML-escaped inside its tag (tag and attributes are never translated). */
export function renderMessage(message: PluginHistoryMessage, escapeXml: (text: string) => string): string {
  return `<message role="${message.role}" source="${message.sourceType}">${escapeXml(message.text)}</message>\n`;
}

/** One saved summary to merge, XML-escaped inside its tag. */
export function renderSummary(content: string, escapeXml: (text: string) => string): string {
  return `<summary>${escapeXml(content)}</summary>\n`;
}

/** The session's templates, read once per call through the plugin's prompt loader. */
export class SummaryTemplates {
  constructor(
    private readonly prompts: PromptLoader,
    private readonly locale: Locale,
  ) {}

  /** Every template in every locale the plugin ships (start-up: a missing file stops the engine with the paths tried). */
  static check(prompts: PromptLoader, locales: readonly Locale[]): void {
    for (const locale of locales) for (const name of TEMPLATE_NAMES) prompts.loadOrThrow(name, locale);
  }

  /** The request that summarizes new history: `history` is the rendered messages. */
  segment(history: string, targetTokens: number): SummaryRequestText {
    const length = String(targetLength(targetTokens, this.locale));
    return {
      system: fill(this.load('segment-system'), 'segment-system', { targetLength: length }),
      prompt: fill(this.load('segment-prompt'), 'segment-prompt', { history: history.trimEnd(), targetLength: length }),
    };
  }

  /** The request that merges old summaries: `summaries` is the rendered summaries, oldest first. */
  merge(summaries: string, targetTokens: number): SummaryRequestText {
    const length = String(targetLength(targetTokens, this.locale));
    return {
      system: fill(this.load('merge-system'), 'merge-system', { targetLength: length }),
      prompt: fill(this.load('merge-prompt'), 'merge-prompt', { summaries: summaries.trimEnd(), targetLength: length }),
    };
  }

  private load(name: TemplateName): string {
    return this.prompts.loadOrThrow(name, this.locale);
  }
}
