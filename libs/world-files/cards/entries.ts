/**
 * A card's `character_book` entries and a world's lorebook, both ways.
 *
 * Card → world, for each entry that can activate (enabled, with content, without `use_regex`):
 * `keys` (blank keys dropped), `constant`, `content`, `insertion_order` → `order`, `position`
 * `before_char` → `before-plugin` and `after_char` (or none) → `after-plugin`, and the book's
 * `scan_depth` (the last N messages, the player's current one counted) → `extra.scanDepth` N − 1
 * (0–20). Its id is `entry-<n>` (its 1-based place in the card's entries), unique among the
 * world's entries and never the kernel's `world-lore` / `world-characters`. Every other field is
 * kept in the bag. What a card cannot say (a world entry's own id, a `{ depth }` position, a
 * scanDepth other than the book's) is written into the card entry's `extensions.covel` on export
 * and read back from there on import.
 */
import { z } from 'zod';
import type { LoreEntry } from '../../plugins-sdk';
import type { CardBagEntry } from './bag';
import type { CardCharacterBook, CardLoreEntry } from './schema';

/** The card entry extension that carries what a world entry has and a card entry cannot say. */
export const COVEL_ENTRY_KEY = 'covel';

const CovelEntryExtension = z
  .object({
    id: z.string().min(1).optional(),
    position: z.object({ depth: z.number().int().nonnegative() }).strict().optional(),
    scanDepth: z.number().int().min(0).max(20).optional(),
  })
  .strict();

/** Ids the kernel gives its own lorebook entries (`worldLorebook` in libs/engine/catalog). */
const RESERVED_IDS = new Set(['world-lore', 'world-characters']);

type WorldLoreEntry = LoreEntry;
type Record_ = Record<string, unknown>;

const isBlank = (s: string) => s.trim() === '';
const nonBlank = (list: readonly string[]) => list.filter((s) => !isBlank(s));
const sameStrings = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((s, i) => s === b[i]);

/** An entry that never activates in the card's own semantics: kept aside whole, out of the lorebook. */
export const isKeptAside = (e: CardLoreEntry): boolean => e.enabled === false || e.content === '' || e.use_regex === true;

/** The book's `scan_depth` (messages scanned, the current one counted) as a world entry's scanDepth. */
export function scanDepthOf(bookScanDepth: unknown): number {
  return typeof bookScanDepth === 'number' && Number.isFinite(bookScanDepth) ? Math.min(20, Math.max(0, Math.floor(bookScanDepth) - 1)) : 0;
}

const positionOf = (p: unknown): 'before-plugin' | 'after-plugin' => (p === 'before_char' ? 'before-plugin' : 'after-plugin');

function covelOf(extensions: Record_): z.infer<typeof CovelEntryExtension> | null {
  if (!Object.hasOwn(extensions, COVEL_ENTRY_KEY)) return null;
  const parsed = CovelEntryExtension.safeParse(extensions[COVEL_ENTRY_KEY]);
  return parsed.success ? parsed.data : null;
}

const positionalId = (index: number) => `entry-${index + 1}`;

/** Entries (that can activate) whose `extensions.covel` is not Covel's shape: the key is reserved, so such a card is refused. */
export function covelExtensionIssues(book: CardCharacterBook | null | undefined): { path: string; message: string }[] {
  return (book?.entries ?? []).flatMap((e, i) =>
    !isKeptAside(e) && Object.hasOwn(e.extensions, COVEL_ENTRY_KEY) && covelOf(e.extensions) === null
      ? [
          {
            path: `data.character_book.entries.${i}.extensions.${COVEL_ENTRY_KEY}`,
            message: 'reserved for Covel: { id?: string, position?: { depth: integer ≥ 0 }, scanDepth?: integer 0–20 }',
          },
        ]
      : [],
  );
}

/** The card's entries as lorebook entries (in the card's order) and the bag's entry list. */
export function cardBookToLorebook(book: CardCharacterBook | null | undefined): { lorebook: WorldLoreEntry[]; bag: CardBagEntry[] } {
  const entries = book?.entries ?? [];
  const scanDepth = scanDepthOf(book?.scan_depth);
  const covel = entries.map((e) => (isKeptAside(e) ? null : covelOf(e.extensions)));
  const taken = new Set(RESERVED_IDS);
  const ids = entries.map((e, i) => {
    const wanted = covel[i]?.id;
    if (isKeptAside(e) || wanted === undefined || taken.has(wanted)) return null;
    taken.add(wanted);
    return wanted;
  });
  entries.forEach((e, i) => {
    if (isKeptAside(e) || ids[i] !== null) return;
    let id = positionalId(i);
    for (let n = 2; taken.has(id); n++) id = `${positionalId(i)}-${n}`;
    taken.add(id);
    ids[i] = id;
  });
  const lorebook: WorldLoreEntry[] = [];
  const bag: CardBagEntry[] = entries.map((e, i) => {
    if (isKeptAside(e)) return { kept: { ...e } };
    const id = ids[i]!;
    const own = covel[i];
    lorebook.push({
      id,
      keys: nonBlank(e.keys),
      constant: e.constant === true,
      content: e.content,
      position: own?.position ?? positionOf(e.position),
      order: e.insertion_order,
      extra: { scanDepth: own?.scanDepth ?? scanDepth },
    });
    const { content: _content, insertion_order: _order, keys, extensions, ...others } = e;
    const { [COVEL_ENTRY_KEY]: _covel, ...ownExtensions } = extensions;
    return {
      lorebookId: id,
      rest: { ...others, ...(sameStrings(keys, nonBlank(keys)) ? {} : { keys }), extensions: own ? ownExtensions : extensions },
    };
  });
  return { lorebook, bag };
}

const record = (v: unknown): Record_ => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record_) : {});
const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((s) => typeof s === 'string') ? (v as string[]) : undefined);

/** One lorebook entry as a card entry, restoring the card's own values where the world still agrees with them. */
function toCardEntry(w: WorldLoreEntry, rest: Record_, index: number, bookScanDepth: number, version: 'v2' | 'v3'): Record_ {
  const covel: Record_ = {};
  const rawKeys = strings(rest.keys);
  const out: Record_ = {
    ...rest,
    keys: rawKeys && sameStrings(nonBlank(rawKeys), w.keys) ? rawKeys : [...w.keys],
    content: w.content,
    extensions: { ...record(rest.extensions) },
    enabled: true,
    insertion_order: w.order,
  };
  if ((rest.constant === true) !== w.constant) out.constant = w.constant;
  if (typeof w.position === 'object') covel.position = w.position;
  else if (positionOf(rest.position) !== w.position) out.position = w.position === 'before-plugin' ? 'before_char' : 'after_char';
  if (w.extra.scanDepth !== bookScanDepth) covel.scanDepth = w.extra.scanDepth;
  if (w.id !== positionalId(index)) covel.id = w.id;
  if (Object.keys(covel).length) (out.extensions as Record_)[COVEL_ENTRY_KEY] = covel;
  if (version === 'v3' && typeof out.use_regex !== 'boolean') out.use_regex = false;
  return out;
}

/**
 * The world's lorebook as card entries, in the world's order, each kept-aside entry of the bag
 * right after the entry it followed in the card (the one before that when the world lost it; at
 * the start when none was before it). Unedited, that is the card's own order.
 */
export function lorebookToCardBook(
  lorebook: readonly WorldLoreEntry[],
  bag: readonly CardBagEntry[],
  options: { bookScanDepth: unknown; version: 'v2' | 'v3' },
): Record_[] {
  const depth = scanDepthOf(options.bookScanDepth);
  const present = new Set(lorebook.map((e) => e.id));
  const rests = new Map<string, Record_>();
  const keptAfter = new Map<string | null, Record_[]>();
  let anchor: string | null = null;
  for (const b of bag) {
    if ('kept' in b) {
      const list = keptAfter.get(anchor) ?? [];
      list.push(b.kept);
      keptAfter.set(anchor, list);
    } else if (present.has(b.lorebookId)) {
      if (!rests.has(b.lorebookId)) rests.set(b.lorebookId, b.rest);
      anchor = b.lorebookId;
    }
  }
  const out: Record_[] = [...(keptAfter.get(null) ?? [])];
  const done = new Set<string>();
  for (const w of lorebook) {
    const first = !done.has(w.id); // a repeated id (a world written by hand) is exported without the bag's fields
    done.add(w.id);
    out.push(toCardEntry(w, (first && rests.get(w.id)) || {}, out.length, depth, options.version));
    if (first) out.push(...(keptAfter.get(w.id) ?? []));
  }
  return out;
}
