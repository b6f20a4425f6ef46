import type { PluginApi } from '../../../../../../plugins-sdk';

/** An old chronicle of some 1,000 tokens: alone it puts a request over an input limit of 844. */
export const CHRONICLE = 'The chronicle of the salt road, read aloud once more. '.repeat(90);

/** What each hook was given (the host loads this very module, so a test that imports it sees them). */
export const seen: { postContextAssembly: string[][]; preLlmCall: { role: string; content: string }[][] } = { postContextAssembly: [], preLlmCall: [] };

/**
 * PostContextAssembly puts the chronicle before everything it is given (a message a hook adds
 * counts as history); PreLLMCall records the request it is given and keeps it.
 */
export function register(api: PluginApi): void {
  api.hook('PostContextAssembly', (payload) => {
    seen.postContextAssembly.push(payload.messages.map((m) => m.content));
    return { messages: [{ role: 'assistant', content: CHRONICLE }, ...payload.messages] };
  });
  api.hook('PreLLMCall', (payload) => {
    seen.preLlmCall.push(payload.messages.map((m) => ({ role: m.role, content: m.content })));
    return { messages: payload.messages };
  });
}
