import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * The README and docs/ link each other and the code: every relative link must name a file that
 * exists, and an `#anchor` into a Markdown file must name one of its headings (GitHub's slugs).
 */
const root = join(__dirname, '..', '..');
const pages = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f)),
];

/** Text outside fenced code blocks and inline code spans. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** GitHub's heading anchor: lower case, punctuation dropped (letters, digits, `-`, `_` and spaces kept), spaces to `-`. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1])));
}

describe('links in README.md and docs/', () => {
  it.each(pages.map((p) => [relative(root, p), p]))('%s: every relative link and anchor resolves', (_name, page) => {
    const broken: string[] = [];
    for (const [, target] of prose(readFileSync(page, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split('#');
      const file = path ? join(dirname(page), path) : page;
      if (!existsSync(file)) broken.push(`${target}: no such file`);
      else if (anchor && file.endsWith('.md') && !anchors(file).has(anchor)) broken.push(`${target}: no heading #${anchor}`);
    }
    expect(broken).toEqual([]);
  });
});
