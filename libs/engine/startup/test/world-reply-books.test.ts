import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { worldReplyRules } from '../offline-emulator';
import { WorldCatalog } from '../../catalog/world-catalog';

describe("WorldCatalog: the worlds' reply books for the offline emulator", () => {
  it('is read from worlds/<id>/emulator-replies.json; a bad file names the file and the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reply-book-'));
    try {
      mkdirSync(join(dir, 'alpha'));
      writeFileSync(join(dir, 'alpha', 'WORLD.md'), '---\nid: alpha\nname: Alpha\n---\nlore\n');
      writeFileSync(join(dir, 'alpha', 'emulator-replies.json'), JSON.stringify({ tools: [{ tool: 'remember', whenPlayerSays: ['x'], args: {} }] }));
      mkdirSync(join(dir, 'beta'));
      writeFileSync(join(dir, 'beta', 'WORLD.md'), '---\nid: beta\nname: Beta\n---\nlore\n');
      await expect(worldReplyRules(new WorldCatalog(dir))).resolves.toEqual([{ tool: 'remember', whenPlayerSays: ['x'], args: {} }]);
      writeFileSync(join(dir, 'beta', 'emulator-replies.json'), JSON.stringify({ tools: [{ tool: 'remember', whenPlayerSays: [], args: {} }] }));
      await expect(worldReplyRules(new WorldCatalog(dir))).rejects.toThrow(/beta[/\\]emulator-replies\.json.*tools\.0\.whenPlayerSays/);
      writeFileSync(join(dir, 'beta', 'emulator-replies.json'), '{ nope');
      await expect(worldReplyRules(new WorldCatalog(dir))).rejects.toThrow(/emulator-replies\.json.*not JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
