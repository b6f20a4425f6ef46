import { parseLlmConfig, SlotConfigError } from '..';

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
});
