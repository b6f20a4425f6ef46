import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DocsBlockError, markdownTable, readBlock, replaceBlock, writeBlocks } from '../../tools/docs-block';

const doc = ['# Title', '', 'Hand-written text.', '', '<!-- bench:x:start -->', 'old figures', '<!-- bench:x:end -->', '', 'More text.', ''].join('\n');

describe('docs blocks (tools/docs-block.ts)', () => {
  it('replaces only the text between the markers', () => {
    const next = replaceBlock(doc, { marker: 'bench:x', content: 'new figures\n' });
    expect(next).toBe(doc.replace('old figures', '\nnew figures\n'));
    expect(readBlock(next, 'bench:x')).toBe('new figures');
  });

  it('refuses a missing, repeated or reversed marker, naming it and the file', () => {
    expect(() => replaceBlock(doc, { marker: 'bench:y', content: '' }, 'docs/b.md')).toThrow('docs/b.md: no <!-- bench:y:start --> marker');
    const twice = `${doc}\n<!-- bench:x:start -->\n`;
    expect(() => replaceBlock(twice, { marker: 'bench:x', content: '' })).toThrow(/<!-- bench:x:start --> appears more than once/);
    const reversed = '<!-- bench:x:end -->\n<!-- bench:x:start -->\n';
    expect(() => replaceBlock(reversed, { marker: 'bench:x', content: '' })).toThrow(DocsBlockError);
    expect(() => replaceBlock(doc, { marker: 'Bench X', content: '' })).toThrow(/bad marker name/);
  });

  it('writes the file through Prettier, so a second write with the same content changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-block-'));
    try {
      const file = join(dir, 'page.md');
      writeFileSync(file, doc);
      const table = markdownTable(
        ['run', 'turns/s'],
        [
          ['a', '12.5'],
          ['b|c', 3],
        ],
      );
      expect(await writeBlocks(file, [{ marker: 'bench:x', content: table }])).toBe(true);
      const written = readFileSync(file, 'utf8');
      expect(readBlock(written, 'bench:x')).toBe(['| run  | turns/s |', '| ---- | ------- |', '| a    | 12.5    |', '| b\\|c | 3       |'].join('\n'));
      expect(written.startsWith('# Title\n\nHand-written text.\n')).toBe(true);
      expect(await writeBlocks(file, [{ marker: 'bench:x', content: table }])).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
