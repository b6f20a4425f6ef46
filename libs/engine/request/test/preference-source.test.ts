import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadPlugins } from '../../../plugins-sdk';
import type { LlmConfig, SlotConfig } from '../../../providers';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';
import { buildRuntimeRequest } from '../runtime-request';
import { bareRequestInputs, unsentProviders } from './bare-request';

/**
 * Spec §3 "Scope of this preference": agent.toolChoice / agent.reasoning are "a request preference
 * of this runtime. It does not rewrite the session or provider configuration, and it is not derived
 * automatically from requireToolUse." Three runtimes share one slot: `forced` declares both
 * preferences, `obliged` only `requireToolUse`, `plain` neither.
 */
const TOOL = { name: 'note', description: 'Notes a fact.', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } };
const runtime = (id: string, agent: string) =>
  `---\nid: ${id}\nschedule: { stage: post-turn }\noutputKind: none\nagent: { slot: fast, tools: [note]${agent} }\n---\n${id} body.`;

const dir = mkdtempSync(join(tmpdir(), 'covel-preferences-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const files: Record<string, string> = {
  'keeper/PLUGIN.md': `---\nid: keeper\nname: Keeper\nversion: "1"\ncontributes:\n  tools:\n    - ${JSON.stringify(TOOL)}\n---\nKeeper.`,
  'keeper/runtimes/forced/RUNTIME.md': runtime('forced', ', toolChoice: required, reasoning: false'),
  'keeper/runtimes/obliged/RUNTIME.md': runtime('obliged', ', requireToolUse: true'),
  'keeper/runtimes/plain/RUNTIME.md': runtime('plain', ''),
};
for (const [name, text] of Object.entries(files)) {
  mkdirSync(dirname(join(dir, name)), { recursive: true });
  writeFileSync(join(dir, name), text);
}
const catalog = new RuntimeCatalog(loadPlugins(dir));

/** Per protocol: the slot, the wire fields that carry the two preferences, and what `forced` sends in them. */
const protocols: [string, SlotConfig, (body: Record<string, unknown>) => Record<string, unknown>, Record<string, unknown>][] = [
  [
    'OpenAI Chat (Qwen)',
    { protocol: 'openai-chat', model: 'qwen3-32b', contextWindow: 32_000, maxOutputTokens: 512, cacheBoundaries: true },
    (b) => ({ tool_choice: b.tool_choice, enable_thinking: b.enable_thinking }),
    { tool_choice: 'required', enable_thinking: false },
  ],
  [
    'Anthropic',
    { protocol: 'anthropic', model: 'claude-sonnet-4-5', contextWindow: 200_000, maxOutputTokens: 2048, cacheBoundaries: true },
    (b) => ({ tool_choice: b.tool_choice, thinking: b.thinking }),
    { tool_choice: { type: 'any' }, thinking: { type: 'disabled' } },
  ],
];

describe('§3 the source of a runtime’s request preferences: its own agent group, nothing else', () => {
  it.each(protocols)(
    '%s: only the declaring runtime’s requests carry them; requireToolUse adds none; the slot stays as configured',
    async (_name, slot, fields, declared) => {
      const config: LlmConfig = { slots: { story: structuredClone(slot), fast: structuredClone(slot) } };
      const configured = structuredClone(config);
      const providers = unsentProviders(config.slots);
      const wire = async (runtimeId: string) => {
        const request = await buildRuntimeRequest(
          bareRequestInputs(catalog, catalog.find('keeper', runtimeId)!, { loop: { conversation: [], tools: [TOOL] } }),
          providers,
        );
        return fields(request.body);
      };
      const none = Object.fromEntries(Object.keys(declared).map((k) => [k, undefined]));
      // the runtime that declares them, first and again after the others (nothing carried over)
      expect(await wire('forced')).toEqual(declared);
      expect(await wire('obliged')).toEqual(none);
      expect(await wire('plain')).toEqual(none);
      expect(await wire('forced')).toEqual(declared);
      // the provider configuration is not rewritten
      expect(config).toEqual(configured);
      expect(providers.forSlot('fast').slot).toEqual(configured.slots.fast);
    },
  );
});
