import { ProviderEmulator } from '../../../emulator';
import { sharedPromptLoader } from '../../../plugins-sdk';
import { endpointFor, parseLlmConfig, ProviderRegistry } from '../../../providers';
import { WorldCreation } from '../../world-creation';
import { GENERATED_WORLD_SCHEMA_NAME, type GenerationInputs, generationModelCall, planGeneration } from '..';

const creation = new WorldCreation({ prompts: sharedPromptLoader() });

const PROTOCOLS = [
  ['openai-chat', 'gpt-4.1-mini'],
  ['openai-responses', 'gpt-4.1-mini'],
  ['anthropic', 'claude-sonnet-4-5'],
  ['gemini', 'gemini-2.5-flash'],
] as const;

/** A world generation call through each protocol's adapter and wire format (the offline emulator answers). */
describe('world generation calls on every protocol', () => {
  let emulator: ProviderEmulator;
  let providers: ProviderRegistry;
  beforeAll(async () => {
    emulator = await new ProviderEmulator().start();
    const toml = PROTOCOLS.map(
      ([protocol, model]) => `[slots.${protocol}]\nprotocol = "${protocol}"\nmodel = "${model}"\ncontextWindow = 128000\nmaxOutputTokens = 1024\n`,
    ).join('\n');
    providers = new ProviderRegistry(
      parseLlmConfig(
        `${toml}\n[slots.story]\nprotocol = "openai-chat"\nmodel = "gpt-4.1-mini"\ncontextWindow = 128000\nmaxOutputTokens = 1024\n[slots.fast]\nprotocol = "openai-chat"\nmodel = "gpt-4.1-nano"\ncontextWindow = 128000\nmaxOutputTokens = 512\n`,
      ),
      (protocol) => endpointFor(protocol, {}, emulator.url),
    );
  });
  afterAll(() => emulator.stop());

  it.each(PROTOCOLS)('%s: the draft is sent (structured output where the protocol has it) and its reply makes a world', async (protocol) => {
    const inputs: GenerationInputs = {
      jobId: 'job',
      description: 'An orchard that grows on the back of a sleeping whale',
      locale: 'zh-Hans',
      slot: protocol,
      repairRounds: 2,
      maxOutputTokens: 16_000,
      maxCharacters: 8,
      maxLoreChars: 12_000,
    };
    const plan = planGeneration(inputs, [], creation);
    if (plan.kind !== 'call') throw new Error(plan.kind);
    const binding = providers.forSlot(protocol);
    const body = binding.adapter.buildRequest(generationModelCall(plan.call, binding, inputs.maxOutputTokens));
    const wire = JSON.stringify(body);
    // the JSON schema travels natively on the protocols that have structured output
    expect([protocol, wire.includes(GENERATED_WORLD_SCHEMA_NAME) || wire.includes('"characterIds"')]).toEqual([
      protocol,
      protocol === 'openai-responses' || protocol === 'gemini',
    ]);
    expect(wire).toContain('16000');
    const reply = await binding.adapter.send(body);
    const next = planGeneration(inputs, [{ text: reply.text, finishReason: reply.finishReason }], creation);
    expect([protocol, next.kind]).toEqual([protocol, 'world']);
    if (next.kind === 'world') expect(next.document.name).toMatch(/^[\u4e00-\u9fff]+$/);
  });
});
