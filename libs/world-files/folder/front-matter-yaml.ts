import { Document, parse, Scalar, stringify, visit } from 'yaml';

/**
 * How a WORLD.md's front matter is written: block style (a line per item, readable in a diff), no
 * line folding (not even of a double-quoted string: the `yaml` package's folded form can lose an
 * escaped space), multi-line strings as literal blocks (`|`), no anchors or aliases for repeated
 * values. The `yaml` package quotes what YAML would read otherwise (`yes`, `null`, `~`, `1e3`,
 * `---`, leading spaces, `: `, `#`, …).
 */
const NODE_OPTIONS = { aliasDuplicateObjects: false } as const;
const TEXT_OPTIONS = { lineWidth: 0, blockQuote: 'literal', doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER } as const;

/**
 * The YAML text of a front matter (`parse`, as the WORLD.md loader calls it, gives `value` back).
 * A multi-line string that a literal block would not keep exactly (a line of only spaces, which
 * YAML reads as an empty line; trailing empty lines) is written double-quoted with escapes
 * instead; so is a multi-line key.
 */
export function frontMatterYaml(value: Record<string, unknown>): string {
  const doc = new Document(value, NODE_OPTIONS);
  visit(doc, {
    Pair(_, pair) {
      if (pair.key instanceof Scalar && typeof pair.key.value === 'string' && pair.key.value.includes('\n')) pair.key.type = Scalar.QUOTE_DOUBLE;
    },
    Scalar(_, node) {
      if (typeof node.value === 'string' && node.value.includes('\n') && !keptAsBlock(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return doc.toString(TEXT_OPTIONS);
}

/**
 * True when the string, written as the `yaml` package writes it as a mapping's value (as it stands
 * in a front matter), reads back the same, also without the text's last line break: the loader
 * takes the line break before the closing `---` as part of the fence, so a block that keeps its
 * trailing empty lines (`|+`) would lose one when it ends the front matter.
 */
function keptAsBlock(text: string): boolean {
  const yaml = stringify({ k: text }, TEXT_OPTIONS);
  const reads = (source: string) => {
    try {
      return (parse(source) as { k?: unknown } | null)?.k === text;
    } catch {
      return false;
    }
  };
  return reads(yaml) && reads(yaml.replace(/\n$/, ''));
}
