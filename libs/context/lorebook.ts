import type { ActivatedLoreEntry } from './types';

export interface LorebookEntryInput {
  id: string;
  keys: readonly string[];
  constant: boolean;
  content: string;
  position: ActivatedLoreEntry['position'];
  order: number;
  scanDepth: number;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether a text holds a keyword: whole words for latin keywords; plain containment for CJK (no word boundaries). */
function matcher(keyword: string): (text: string) => boolean {
  if (!/^[\p{Script=Latin}\d\s'-]+$/u.test(keyword)) return (text) => text.includes(keyword);
  // not global: `test` keeps no state between texts
  const re = new RegExp(`(^|[^\\p{L}\\d])${escapeRe(keyword)}($|[^\\p{L}\\d])`, 'iu');
  return (text) => re.test(text);
}

/**
 * Spec §4 "The scan range of lorebook entries": the current player message is always scanned; an
 * entry's scanDepth adds that many committed messages from the tail (compacted ones included).
 */
export function activateLorebook(
  entries: readonly LorebookEntryInput[],
  scan: { playerInput: string; committedTail: readonly { text: string }[] },
): ActivatedLoreEntry[] {
  // each keyword compiled once per scan, not once per text it is tried on
  const matchers = new Map<string, (text: string) => boolean>();
  const matches = (keyword: string, text: string) => {
    let m = matchers.get(keyword);
    if (m === undefined) {
      m = matcher(keyword);
      matchers.set(keyword, m);
    }
    return m(text);
  };
  const active: ActivatedLoreEntry[] = [];
  for (const e of entries) {
    const base = { id: e.id, content: e.content, position: e.position, order: e.order };
    if (e.constant) {
      active.push({ ...base, reason: { kind: 'constant' } });
      continue;
    }
    const inInput = e.keys.find((k) => matches(k, scan.playerInput));
    if (inInput) {
      active.push({ ...base, reason: { kind: 'keyword', keyword: inInput, matchedIn: 'player-input' } });
      continue;
    }
    const tail = e.scanDepth > 0 ? scan.committedTail.slice(-e.scanDepth) : [];
    const inHistory = e.keys.find((k) => tail.some((m) => matches(k, m.text)));
    if (inHistory) active.push({ ...base, reason: { kind: 'keyword', keyword: inHistory, matchedIn: 'history' } });
  }
  return active;
}
