import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PluginManifestError } from '../../libs/plugins-sdk';
import { startEmbedded } from '../support/embedded';

const PLUGINS = join(__dirname, '..', 'fixtures', 'typo-tool-plugins');

describe('agent.tools at start-up', () => {
  it('a runtime declaring a tool that does not exist stops start-up, naming plugin, runtime and tool', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-data-'));
    try {
      // an engine that starts anyway is stopped again, so that the test fails instead of hanging
      const outcome = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS }, dataDir).then(
        async (covel) => (await covel.stop(), 'started'),
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(PluginManifestError);
      expect((outcome as PluginManifestError).message).toMatch(
        `${join(PLUGINS, 'clerk', 'PLUGIN.md')}: runtime.agent.tools.1: plugin clerk: runtime clerk declares tool "get-charcter", which is neither a framework tool nor a tool any loaded plugin declares in contributes.tools`,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
