import { readFileSync } from 'node:fs';
import type { EmulatorOptions, ProviderEmulator, ReplyBookRule } from '../../emulator';
import { manifestIssues, PluginManifestError } from '../../plugins-sdk';
import type { WorldCatalog } from '../catalog/world-catalog';

/**
 * The one door from production code to the offline provider emulator (libs/emulator, a dev and test
 * tool): it is loaded here by a dynamic import, only when a worker has a model slot with no real key
 * and no `COVEL_EMULATOR_URL` (the embedded default without a provider key). Every other import of
 * the emulator outside tests fails the lint (the boundary rule in eslint.config.mjs), so a process
 * with real keys, and every API process, never loads it.
 */
const loadEmulator = () => import('../../emulator');

/**
 * The rules of every world's reply book (`worlds/<id>/emulator-replies.json`, optional), worlds in
 * id order. A bad file stops start-up, naming the file and the field path.
 */
export async function worldReplyRules(worlds: WorldCatalog): Promise<ReplyBookRule[]> {
  const { ReplyBook } = await loadEmulator();
  return worlds.replyBookFiles().flatMap((file) => {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new PluginManifestError(file, [{ path: '(file)', message: `not JSON: ${(error as Error).message}` }]);
    }
    const parsed = ReplyBook.safeParse(json);
    if (!parsed.success) throw new PluginManifestError(file, manifestIssues(parsed.error));
    return parsed.data.tools;
  });
}

/** Starts the offline emulator on loopback, answering bookkeeping calls from the worlds' reply books. */
export async function startOfflineEmulator(options: { settings: EmulatorOptions; worlds: WorldCatalog }): Promise<ProviderEmulator> {
  const { ProviderEmulator, replyBookScript } = await loadEmulator();
  const script = replyBookScript(await worldReplyRules(options.worlds));
  return new ProviderEmulator({ ...options.settings, ...(script ? { script } : {}) }).start();
}
