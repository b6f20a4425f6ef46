'use strict';

/**
 * The tool this plugin declares (agent.tools may name only declared tools). The stream tests run
 * their own ToolSet, which answers these calls; this handler is never reached there.
 */
exports.register = (api) => {
  api.registerTool('lookup', async (args) => ({ found: args.q }));
};
