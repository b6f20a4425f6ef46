'use strict';

/** The tool this plugin declares; the tests run their own ToolSet, this handler is never reached there. */
exports.register = (api) => {
  api.registerTool('survey', async () => ({ found: 'a map' }));
};
