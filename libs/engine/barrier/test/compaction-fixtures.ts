import { join } from 'node:path';
import type { EmulatorScript } from '../../../emulator';
import type { LoadedPlugin } from '../../../plugins-sdk';
import { endpointFor, parseLlmConfig, ProviderRegistry } from '../../../providers';
import { TurnRunner } from '../../turn/turn-runner';
import { type TurnHarness, turnHarness } from '../../turn/test/harness';

/** The barrier's fixture plugins (test/fixtures/compaction-plugins): compactor, critic, teller, windowed, glancer. */
const COMPACTION_PLUGINS = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'compaction-plugins');

/** Small windows: story and fast 4,096 tokens, each after its reserve 3,584 (threshold 2,688). */
const SMALL = `
[slots.story]
protocol = "openai-chat"
model = "gpt-4.1-mini"
contextWindow = 4096
maxOutputTokens = 512

[slots.fast]
protocol = "openai-chat"
model = "gpt-4.1-nano"
contextWindow = 4096
maxOutputTokens = 512
`;

/** Turns through the real turn runner with the compaction fixture plugins `keep` keeps, on the small windows above. */
export async function compactionHarness(options: { keep: (plugin: LoadedPlugin) => boolean; script: EmulatorScript }): Promise<TurnHarness> {
  const h = await turnHarness({ pluginsDir: COMPACTION_PLUGINS, pluginFilter: options.keep, script: options.script, handlers: (deps) => new TurnRunner(deps) });
  h.deps.providers = new ProviderRegistry(parseLlmConfig(SMALL), (protocol) => endpointFor(protocol, {}, h.emulator.url));
  return h;
}

/** How many history messages a recorded `llm.calling@1` request holds (its layout's `history` sections). */
export const historyCount = (call: Record<string, unknown>) =>
  (call.layout as { messageSections: string[] }).messageSections.filter((s) => s === 'history').length;
