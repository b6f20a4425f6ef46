import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SlotConfigError } from '../../libs/providers';
import { startEmbedded } from '../support/embedded';

describe('token limits at start-up', () => {
  it('a response reserve that leaves no input room stops start-up with LLM_CONFIG_INVALID, naming the slot and the field', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-data-'));
    const file = join(dataDir, 'llm.toml');
    writeFileSync(
      file,
      [
        '[slots.story]',
        'protocol = "openai-chat"',
        'model = "gpt-4.1-mini"',
        'contextWindow = 4096',
        'maxOutputTokens = 1024',
        'responseReserve = 4096',
        '',
        '[slots.fast]',
        'protocol = "openai-chat"',
        'model = "gpt-4.1-nano"',
        'contextWindow = 128000',
        'maxOutputTokens = 512',
      ].join('\n'),
    );
    try {
      // an engine that starts anyway is stopped again, so that the test fails instead of hanging
      const outcome = await startEmbedded({ COVEL_LLM_CONFIG: file }, dataDir).then(
        async (covel) => (await covel.stop(), 'started'),
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(SlotConfigError);
      expect((outcome as SlotConfigError).code).toBe('LLM_CONFIG_INVALID');
      expect((outcome as SlotConfigError).message.startsWith(`${file}: slots.story.responseReserve: `)).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
