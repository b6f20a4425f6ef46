import { configuredOverrides, layerOverrides, parseLlmConfig, ProviderRegistry, SlotConfigError } from '..';

describe('llm.toml slots', () => {
  it('parses slots with protocol, window and input settings', () => {
    const config = parseLlmConfig(`
[slots.story]
protocol = "anthropic"
model = "claude-sonnet-4-5"
contextWindow = 200000
maxOutputTokens = 2048
imageInput = true
[slots.fast]
protocol = "openai-chat"
model = "f"
contextWindow = 500
maxOutputTokens = 50
lateSystemAsUser = true
`);
    expect(config.slots.story).toMatchObject({ protocol: 'anthropic', imageInput: true, cacheBoundaries: true });
    expect(config.slots.fast.lateSystemAsUser).toBe(true);
  });

  it('bad input names the field', () => {
    expect(() => parseLlmConfig('[slots.story]\nmodel = 3\n')).toThrow(SlotConfigError);
    expect(() => parseLlmConfig('[slots.story]\nmodel = 3\n')).toThrow(/slots\.story\.model/);
    expect(() => parseLlmConfig('not toml = = =')).toThrow(/toml/);
  });

  it('a slot deadline is at most 24 h (past 2^31-1 ms a Node timer fires at once and every call would fail): larger names the key', () => {
    const slot = (line: string) =>
      `[slots.story]\nprotocol = "openai-chat"\nmodel = "m"\ncontextWindow = 1000\nmaxOutputTokens = 10\n${line}\n[slots.fast]\nprotocol = "openai-chat"\nmodel = "f"\ncontextWindow = 500\nmaxOutputTokens = 50\n`;
    expect(parseLlmConfig(slot('totalTimeoutMs = 86400000')).slots.story.totalTimeoutMs).toBe(86_400_000);
    for (const key of ['firstByteTimeoutMs', 'idleTimeoutMs', 'totalTimeoutMs']) {
      expect(() => parseLlmConfig(slot(`${key} = 2147483648`))).toThrow(SlotConfigError);
      expect(() => parseLlmConfig(slot(`${key} = 86400001`))).toThrow(new RegExp(`slots\\.story\\.${key}: at most 86400000`));
    }
  });
});

describe('llm.toml request settings: a slot and its preset (spec §3 "the preset\'s provider metadata")', () => {
  const SLOTS = `
[slots.story]
protocol = "anthropic"
model = "claude-sonnet-4-5"
contextWindow = 200000
maxOutputTokens = 4096
preset = "deliberate"
toolChoice = "required"
[slots.fast]
protocol = "openai-chat"
model = "qwen-plus"
contextWindow = 128000
maxOutputTokens = 512
reasoning = { enabled = false }
`;
  const PRESET = `
[presets.deliberate]
reasoning = { enabled = true, effort = "high" }
toolChoice = "auto"
`;
  const issues = (text: string) => {
    try {
      parseLlmConfig(text);
    } catch (error) {
      if (error instanceof SlotConfigError) return error.issues;
      throw error;
    }
    return [];
  };

  it("a slot takes its preset's settings, its own win field by field; a slot without a preset has its own only", () => {
    const config = parseLlmConfig(SLOTS + PRESET);
    expect(config.presets).toEqual({ deliberate: { reasoning: { enabled: true, effort: 'high' }, toolChoice: 'auto' } });
    expect(configuredOverrides(config, config.slots.story)).toEqual({ reasoning: { enabled: true, effort: 'high' }, toolChoice: 'required' });
    expect(configuredOverrides(config, config.slots.fast)).toEqual({ reasoning: { enabled: false } });
    const plain = parseLlmConfig(SLOTS.replace('preset = "deliberate"\n', '').replace('reasoning = { enabled = false }\n', ''));
    expect(configuredOverrides(plain, plain.slots.story)).toEqual({ toolChoice: 'required' });
    expect(configuredOverrides(plain, plain.slots.fast)).toEqual({});
  });

  it('the registry binds each slot with them (what every request of the slot is built with)', () => {
    const registry = new ProviderRegistry(parseLlmConfig(SLOTS + PRESET), () => ({ kind: 'emulator', apiKey: 'k', baseURL: 'http://127.0.0.1:9' }));
    expect(registry.forSlot('story').overrides).toEqual({ reasoning: { enabled: true, effort: 'high' }, toolChoice: 'required' });
  });

  it('layers: the first that sets a field wins', () => {
    expect(layerOverrides(undefined, { toolChoice: 'none' }, { toolChoice: 'required', reasoning: { enabled: true } })).toEqual({
      toolChoice: 'none',
      reasoning: { enabled: true },
    });
    expect(layerOverrides()).toEqual({});
  });

  it('bad values, unknown keys and a preset that is not there are errors naming the key', () => {
    expect(issues(SLOTS.replace('toolChoice = "required"', 'toolChoice = "always"') + PRESET).map((i) => i.path)).toEqual(['slots.story.toolChoice']);
    expect(issues(SLOTS + PRESET.replace('"high"', '"max"')).map((i) => i.path)).toEqual(['presets.deliberate.reasoning.effort']);
    expect(issues(SLOTS.replace('{ enabled = false }', '{ on = false }') + PRESET).map((i) => i.path)).toEqual(
      expect.arrayContaining(['slots.fast.reasoning.enabled', 'slots.fast.reasoning.on']),
    );
    // a snake_case key is not silently ignored
    const snake = issues(SLOTS.replace('toolChoice = "required"', 'tool_choice = "required"') + PRESET);
    expect(snake).toEqual([{ path: 'slots.story.tool_choice', message: 'unknown key' }]);
    expect(issues(SLOTS)).toEqual([{ path: 'slots.story.preset', message: 'no [presets.deliberate] in the file' }]);
    expect(issues(SLOTS + PRESET + '\n[preset.other]\ntoolChoice = "auto"\n')).toEqual([{ path: 'preset', message: 'unknown key' }]);
    expect(() => parseLlmConfig(SLOTS.replace('toolChoice', 'tool_choice') + PRESET)).toThrow('llm.toml: slots.story.tool_choice: unknown key');
  });
});
