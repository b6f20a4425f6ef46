import type IORedis from 'ioredis';

/**
 * A worker's fetch without the empty round trips (issue 33). BullMQ's `moveToActive` script adds
 * the queue's base marker (member `0` of `<queue>:marker`, what a worker's BZPOPMIN waits on) each
 * time it takes a job, so that another worker wakes and looks for more; nothing takes it away but a
 * BZPOPMIN. A worker that took the one job there was therefore fetched once more (empty), then
 * woke at once on its own marker and fetched again (empty) before it blocked: per job two empty
 * script calls and one BZPOPMIN beyond the one fetch (and any other idle worker woke for nothing
 * the same way).
 *
 * This is BullMQ's own script with two changes. A fetch that finds nothing to take (not rate
 * limited, not paused or maxed, the wait list and the prioritized set empty: every early return is
 * before it) removes the base marker in the same atomic call. Nothing waits then, so the marker was
 * stale; any job made available later adds it again (an add, a promotion of a delayed job, a
 * stalled job moved back, a parent whose children ended), so no wake-up is lost. The delay marker
 * (member `1`, scored with the next delayed job's time) is left alone.
 *
 * A fetch that takes a job marks the queue only when another job still waits (wait list or
 * prioritized set): with none, the mark would only wake an idle worker (another process's) to a
 * fetch that finds nothing.
 */
const ANCHOR = '-- Return the timestamp for the next delayed job if any.';
const CLEAR = 'rcall("ZREM", markerKey, "0") -- covel: nothing to take, the base marker is stale\n';
const TAKE_MARK = 'addBaseMarkerIfNeeded(markerKey, false)';
/** KEYS[1] the wait list, KEYS[3] the prioritized set (moveToActive's keys). */
const TAKE_MARK_IF_MORE = `if rcall("LLEN", KEYS[1]) > 0 or rcall("ZCARD", KEYS[3]) > 0 then ${TAKE_MARK} end -- covel: only while another job waits`;

interface BullMqScript {
  name: string;
  keys: number;
  content: string;
}

/** `text` with its one occurrence of `anchor` replaced; null when it has none or several. */
function replaceOnce(text: string, anchor: string, by: string): string | null {
  const at = text.indexOf(anchor);
  if (at < 0 || text.indexOf(anchor, at + 1) >= 0) return null;
  return text.slice(0, at) + by + text.slice(at + anchor.length);
}

/** BullMQ's moveToActive with the two changes above; null when its text has changed (its own is used then). */
export function leanMoveToActive(): BullMqScript | null {
  // BullMQ's script table, as its connections define them
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { moveToActive } = require('bullmq/dist/cjs/scripts') as { moveToActive: BullMqScript };
  const cleared = replaceOnce(moveToActive.content, ANCHOR, CLEAR + ANCHOR);
  const content = cleared && replaceOnce(cleared, TAKE_MARK, TAKE_MARK_IF_MORE);
  return content ? { ...moveToActive, content } : null;
}

/**
 * Defines the lean fetch on a worker connection under BullMQ's own command name, before BullMQ
 * loads its scripts on it (it defines only the commands not defined yet). True when it did.
 */
export function withLeanFetch(connection: IORedis): boolean {
  const script = leanMoveToActive();
  if (!script) return false;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { version } = require('bullmq/dist/cjs/version') as { version: string };
  connection.defineCommand(`${script.name}:${version}`, { numberOfKeys: script.keys, lua: script.content });
  return true;
}
