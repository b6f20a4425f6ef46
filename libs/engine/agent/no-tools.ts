import type { ToolSet } from '../tools';

/** The ToolSet until the tools are wired (`TurnDeps.tools`): no definitions, every call answered `TOOL_UNKNOWN`. */
export const NO_TOOLS: ToolSet = {
  definitions: () => [],
  execute: async (call) => ({
    content: JSON.stringify({ error: { code: 'TOOL_UNKNOWN', message: `no tool named ${call.name}` } }),
    ok: false,
    errorCode: 'TOOL_UNKNOWN',
    changes: [],
    emissions: [],
  }),
};
