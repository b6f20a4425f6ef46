import { type ActivatedLoreEntry, activateLorebook, type LorebookEntryInput } from '../../context';
import { deepFreeze } from '../../memo';

/** What a lorebook is scanned with (`activateLorebook`'s scan). */
export interface LoreScan {
  playerInput: string;
  committedTail: readonly { text: string }[];
}

/**
 * Activations of a lorebook (a world's, `worldLorebook`: one object per loaded world and kind) per
 * scanned tail object and player text: the runtimes of a turn that share a history view (its
 * `scanTail`) scan it with the same text, and the story runtime's request is built twice (the
 * compaction barrier's estimate, then its step): each scan compiles every keyword and tries it on
 * every text of the tail otherwise (issue 33). Held by the entries and the tail (WeakMaps): a
 * scan is forgotten with them. `activateLorebook` is pure and neither is changed (the entries are
 * frozen; a tail is a history view's, never written), so the kept answer is its answer; frozen.
 */
const scans = new WeakMap<readonly LorebookEntryInput[], WeakMap<readonly { text: string }[], Map<string, readonly ActivatedLoreEntry[]>>>();

/** `activateLorebook(entries, scan)`, answered again for the same entries, tail object and text. */
export function activeLore(entries: readonly LorebookEntryInput[], scan: LoreScan): readonly ActivatedLoreEntry[] {
  let byTail = scans.get(entries);
  if (!byTail) scans.set(entries, (byTail = new WeakMap()));
  let byInput = byTail.get(scan.committedTail);
  if (!byInput) byTail.set(scan.committedTail, (byInput = new Map()));
  let active = byInput.get(scan.playerInput);
  if (!active) byInput.set(scan.playerInput, (active = deepFreeze(activateLorebook(entries, scan))));
  return active;
}
