import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorld, splitWorldLore } from '..';

/** Issue 28 item 4: a world's body may hold a part for the narrator alone between two marker lines. */
describe('narrator-only parts of a world body', () => {
  const body = ['Open text.', '<!-- narrator-only -->', 'The secret.', '  <!-- /narrator-only -->  ', 'More open text.'].join('\n');

  it('world.lore is the whole body without the marker lines; sharedLore also leaves out the part (spec §4)', () => {
    expect(splitWorldLore(body, 'W.md')).toEqual({ lore: 'Open text.\nThe secret.\nMore open text.', sharedLore: 'Open text.\nMore open text.' });
    expect(splitWorldLore('No markers.\n', 'W.md')).toEqual({ lore: 'No markers.\n', sharedLore: 'No markers.\n' });
    // a marker inside a line of prose is text, not a marker
    const inline = 'Write <!-- narrator-only --> in a line.';
    expect(splitWorldLore(inline, 'W.md')).toEqual({ lore: inline, sharedLore: inline });
  });

  it('loadWorld splits a WORLD.md body', () => {
    const dir = mkdtempSync(join(tmpdir(), 'covel-world-'));
    try {
      const file = join(dir, 'WORLD.md');
      writeFileSync(file, `---\nid: w\nname: W\n---\n${body}`);
      expect(loadWorld(file)).toMatchObject({ lore: 'Open text.\nThe secret.\nMore open text.', sharedLore: 'Open text.\nMore open text.' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unclosed, unopened or nested part is an error naming the file and the line', () => {
    expect(() => splitWorldLore('a\n<!-- narrator-only -->\nb', 'W.md')).toThrow(
      'W.md: body line 2: <!-- narrator-only --> is never closed by <!-- /narrator-only -->',
    );
    expect(() => splitWorldLore('a\n<!-- /narrator-only -->', 'W.md')).toThrow(
      'W.md: body line 2: <!-- /narrator-only --> without an opening <!-- narrator-only -->',
    );
    expect(() => splitWorldLore('<!-- narrator-only -->\n<!-- narrator-only -->\n<!-- /narrator-only -->', 'W.md')).toThrow(
      'W.md: body line 2: <!-- narrator-only --> inside the narrator-only part opened at body line 1',
    );
  });
});
