import type { Locale } from '../plugins-sdk';
import { fixedText } from './fixed-text';
import type { RuntimeView } from './types';

/**
 * Spec §3 "PostContextAssembly and the framework preamble": [RUNTIME], [LANGUAGE], [COMPLETION],
 * in the session's instruction language. The completion form follows how the runtime ends.
 */
export function frameworkPreamble(locale: Locale, runtime: RuntimeView): string {
  const t = fixedText(locale);
  const completion = runtime.hasOutputSchema ? `${t.completionSchema}\n${t.jsonRules}` : runtime.outputKind === 'story' ? t.completionStory : t.completionDone;
  return [t.runtime(runtime.pluginId, runtime.runtimeId), t.language, completion].join('\n\n');
}
