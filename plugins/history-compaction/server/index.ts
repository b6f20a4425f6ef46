import { join } from 'node:path';
import type { PluginApi } from '../../../libs/plugins-sdk';
import { compactHistory } from './strategy';
import { SummaryTemplates } from './templates';

/** The id of this plugin's `history.compact@2` provider (its `contributes.extensions` entry). */
export const PROVIDER_ID = 'summaries';

/**
 * The default `history.compact@2` provider. Written as a plugin outside the repository would be:
 * only types are imported from the SDK; the prompt loader, the plugin's folder and `escapeXml` come
 * through `api.sdk` / `ctx.sdk`, the summary model and the token estimate through `ctx`.
 */
export function register(api: PluginApi): void {
  const root = api.sdk.pluginRoot;
  if (root === null) throw new Error('history-compaction: the host gave no plugin folder (api.sdk.pluginRoot), so its templates cannot be read');
  const prompts = api.sdk.createPromptLoader(join(root, 'prompts', 'server'));
  SummaryTemplates.check(prompts, ['en', 'zh-Hans']);
  api.provideExtension('history.compact@2', PROVIDER_ID, { handler: (input, ctx) => compactHistory(input, ctx, prompts) });
}
