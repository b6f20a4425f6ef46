import type { Locale } from '../plugins-sdk';
import { fixedText } from './fixed-text';
import type { RuntimeView } from './types';

/**
 * Spec §3 "PostContextAssembly and the framework preamble": [RUNTIME], [LANGUAGE], [COMPLETION],
 * in the session's instruction language. [LANGUAGE] names the session's language as the session
 * recorded it (`languageName`, e.g. `Brazilian Portuguese (pt-BR)`); none (a session recorded
 * before the name was): English, or Simplified Chinese for a Chinese session, as it was sent then.
 * The completion form follows how the runtime ends.
 */
export function frameworkPreamble(locale: Locale, runtime: RuntimeView, languageName?: string): string {
  const t = fixedText(locale);
  const completion =
    runtime.hasOutputSchema || runtime.outputSchema
      ? `${t.completionSchema}\n${t.jsonRules}${runtime.outputSchema ? `\n${outputSchemaBlock(runtime.outputSchema)}` : ''}`
      : runtime.outputKind === 'story'
        ? t.completionStory
        : t.completionDone;
  return [t.runtime(runtime.pluginId, runtime.runtimeId), t.language(languageName), completion].join('\n\n');
}

/**
 * The output schema as the model reads it (spec §6, the bridge's copy in the system prompt): its
 * JSON, with every `</` written `<\/` (the same JSON) so no text in the schema can close the block.
 */
export function outputSchemaBlock(schema: Readonly<Record<string, unknown>>): string {
  return `<output-schema>\n${JSON.stringify(schema).replace(/<\//g, '<\\/')}\n</output-schema>`;
}
