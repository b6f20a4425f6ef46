'use strict';

/**
 * The tools this plugin declares (agent.tools may name only declared tools). The agent tests run
 * their own ToolSet, which answers and counts these calls; these handlers are never reached there.
 */
exports.register = (api) => {
  api.registerTool('lookup', async (args) => ({ found: args.q ?? args.key }));
  api.registerTool('note', async () => ({ noted: true }));
};
