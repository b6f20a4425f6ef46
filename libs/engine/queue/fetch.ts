import type IORedis from 'ioredis';
import type { BullMqScript } from './load-bullmq';

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
 * fetch that finds nothing. With none, it also says so with the job (the field `DRAINED_FIELD` in
 * the job's hash as returned, not stored): the worker (`withDrainedHint`) then blocks on the marker
 * next instead of fetching once more to find the queue empty (a script call a job). A job made
 * available after the script marks the queue, so the block wakes for it.
 */
const ANCHOR = '-- Return the timestamp for the next delayed job if any.';
const CLEAR = 'rcall("ZREM", markerKey, "0") -- covel: nothing to take, the base marker is stale\n';
const TAKE_MARK = 'addBaseMarkerIfNeeded(markerKey, false)';
/** KEYS[1] the wait list, KEYS[3] the prioritized set (moveToActive's keys). */
const TAKE_MARK_IF_MORE = `local covelMore = rcall("LLEN", KEYS[1]) > 0 or rcall("ZCARD", KEYS[3]) > 0 -- covel: only while another job waits
  if covelMore then ${TAKE_MARK} end`;
/** The field a taken job's returned hash carries when no other job waits (not written to the job). */
export const DRAINED_FIELD = 'covelDrained';
const TAKE_RETURN = 'return {rcall("HGETALL", jobKey), jobId, 0, 0} -- get job data';
const TAKE_RETURN_HINTED = `local covelJob = rcall("HGETALL", jobKey)
  if not covelMore then table.insert(covelJob, "${DRAINED_FIELD}"); table.insert(covelJob, "1") end -- covel: nothing else waits
  -- covel: and when the queue is drained, the next delayed job's time, so the worker's block ends when it is due
  local covelDelayUntil = 0
  if not covelMore then covelDelayUntil = getNextDelayedTimestamp(KEYS[7]) or 0 end
  return {covelJob, jobId, 0, covelDelayUntil}`;

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
  const marked = cleared && replaceOnce(cleared, TAKE_MARK, TAKE_MARK_IF_MORE);
  const content = marked && replaceOnce(marked, TAKE_RETURN, TAKE_RETURN_HINTED);
  return content ? { ...moveToActive, content } : null;
}

/** What of BullMQ's Worker the hint uses (its own, not in its typings as public). */
interface HintedWorker {
  drained: boolean;
  nextJobFromJobData?: (jobData: Record<string, unknown> | null | undefined, jobId: string | undefined, token: string) => Promise<unknown>;
}

/**
 * A worker on a lean-fetch connection takes the hint its fetch gives with a job (`DRAINED_FIELD`:
 * nothing else waits): it counts the queue drained, as BullMQ does after a fetch that finds nothing,
 * so its next fetch blocks on the marker at once. False when BullMQ's worker has changed (no hint taken).
 */
export function withDrainedHint(worker: object): boolean {
  const hinted = worker as HintedWorker;
  const next = hinted.nextJobFromJobData;
  if (typeof next !== 'function' || typeof hinted.drained !== 'boolean') return false;
  hinted.nextJobFromJobData = async (jobData, jobId, token) => {
    const job = await next.call(worker, jobData, jobId, token);
    if (job && jobData?.[DRAINED_FIELD] === '1') hinted.drained = true;
    return job;
  };
  return true;
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
