/** Length in code points (what the budgets count; never UTF-16 units). */
export const codePoints = (text: string) => Array.from(text).length;

/** The first `n` code points, with an ellipsis when something was cut. */
export function cutTo(text: string, n: number): string {
  const chars = Array.from(text);
  return chars.length <= n ? text : `${chars.slice(0, n).join('')}…`;
}

/** One listed item: its id, its full text, and how to write it whole or as a cut preview. */
export interface FitItem {
  id: string;
  /** The value's full text (JSON). */
  full: string;
  line(value: string, preview: boolean): string;
}

export interface FitResult {
  lines: string[];
  /** Ids whose value is a preview. */
  cut: string[];
  /** Ids left out (still too long with every long value cut). */
  omitted: string[];
}

/**
 * Fits items into `budget` code points, counted over `frame(lines, cut, omitted)` (the whole
 * segment): every value in full when it fits; else the longest values are cut to `cutLength` code
 * points one by one, longest first (ties by id), until it fits; still over: the last items (in
 * the given order) are left out, and the frame states how many.
 */
export function fitLines(
  items: readonly FitItem[],
  options: { budget: number; cutLength: number; frame(lines: string[], cut: number, omitted: number): string },
): FitResult {
  const cut = new Set<string>();
  let kept = items.length;
  const render = () => {
    const lines = items.slice(0, kept).map((i) => (cut.has(i.id) ? i.line(cutTo(i.full, options.cutLength), true) : i.line(i.full, false)));
    const cutCount = items.slice(0, kept).filter((i) => cut.has(i.id)).length;
    return { lines, text: options.frame(lines, cutCount, items.length - kept) };
  };
  const fits = () => codePoints(render().text) <= options.budget;
  if (!fits()) {
    const longest = [...items]
      .filter((i) => codePoints(i.full) > options.cutLength)
      .sort((a, b) => codePoints(b.full) - codePoints(a.full) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const item of longest) {
      cut.add(item.id);
      if (fits()) break;
    }
  }
  while (kept > 0 && !fits()) kept--;
  const kept_ = items.slice(0, kept);
  return {
    lines: render().lines,
    cut: kept_.filter((i) => cut.has(i.id)).map((i) => i.id),
    omitted: items.slice(kept).map((i) => i.id),
  };
}
