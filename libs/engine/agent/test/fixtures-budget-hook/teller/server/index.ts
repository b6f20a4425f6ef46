import type { PluginApi } from '../../../../../../plugins-sdk';

/** What each PostContextAssembly call was given: its messages (the host loads this very module, so a test that imports it sees them). */
export const seen: { role: string; content: string }[][] = [];

/** A PostContextAssembly hook that records the messages it is given and keeps them. */
export function register(api: PluginApi): void {
  api.hook('PostContextAssembly', (payload) => {
    seen.push(payload.messages.map((m) => ({ role: m.role, content: m.content })));
    return { messages: payload.messages };
  });
}
