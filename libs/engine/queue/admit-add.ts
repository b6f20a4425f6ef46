import type { Job, JobsOptions, Queue } from 'bullmq';
import type IORedis from 'ioredis';
import { FAIR_FUNCTIONS } from './fair';
import { bullmq, type BullMqScript } from './load-bullmq';

/**
 * An enqueue's admission and the add of its turn job in one script call (issue 33: one round trip
 * per input in the API instead of two). The script is the admission (`ADMIT_SCRIPT`'s `enqueue`)
 * followed, only when it admits, by BullMQ's own `addStandardJob` script, its text taken from the
 * BullMQ installed and run as a function of its keys and arguments: the job is written exactly as
 * `Queue.add` writes it. The arguments are BullMQ's too: the job is built and encoded by BullMQ's
 * `Job.addJob`, whose one script call is answered by this command instead of the connection.
 */

/** addStandardJob's keys (wait, paused, meta, id, completed, delayed, active, events, marker): its arguments follow them. */
const ADD_KEYS = 9;

/** ADMIT_SCRIPT's arguments (ARGV[1..9]): addStandardJob's follow them. */
const ADMISSION_ARGS = 9;

/** The command's name on a connection. */
const COMMAND = 'covelFairAdmitAdd';

/** What `addJob` sends: BullMQ's script name with its version (`Scripts.execCommand`). */
const addCommandName = (): string => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { version } = require('bullmq/dist/cjs/version') as { version: string };
  return `addStandardJob:${version}`;
};

/** `addCommandName()`, read once (by `withAdmitAdd`, when the command is defined): not per enqueue. */
let addCommand: string | undefined;

/** BullMQ's addStandardJob script, as its connections define it; null when this BullMQ has none. */
function addStandardJobScript(): BullMqScript | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { addStandardJob } = require('bullmq/dist/cjs/scripts') as { addStandardJob?: BullMqScript };
    return addStandardJob && typeof addStandardJob.content === 'string' && addStandardJob.keys === ADD_KEYS ? addStandardJob : null;
  } catch {
    return null;
  }
}

/**
 * The script's text: KEYS are addStandardJob's, ARGV[1..9] the admission's (as ADMIT_SCRIPT's), the
 * rest addStandardJob's arguments. Answers `{admitted}` (0 held, 2 its job is there: nothing added)
 * or `{1, <addStandardJob's answer>}`. Null when BullMQ has no such script.
 */
export function admitAddScript(): { keys: number; lua: string } | null {
  const add = addStandardJobScript();
  if (!add) return null;
  const lua = `${FAIR_FUNCTIONS}
local admitted = enqueue(ARGV[5], ARGV[6], ARGV[7], tonumber(ARGV[8]), ARGV[9] == '1')
if admitted ~= 1 then return {admitted} end
local function addStandardJob(KEYS, ARGV)
${add.content}
end
return {admitted, addStandardJob(KEYS, {unpack(ARGV, ${ADMISSION_ARGS + 1})})}
`;
  return { keys: ADD_KEYS, lua };
}

type AdmitAddCommand = (...args: (string | number | Buffer)[]) => Promise<[number, (string | number)?]>;

/** Defines the command on a connection; false when this BullMQ has no addStandardJob script (admission and add go as two calls). */
export function withAdmitAdd(connection: IORedis): boolean {
  const script = admitAddScript();
  if (!script) return false;
  connection.defineCommand(COMMAND, { numberOfKeys: script.keys, lua: script.lua });
  addCommand ??= addCommandName();
  return true;
}

/**
 * Admits the turn job and, when admitted, adds it, in one call: BullMQ builds the job (`Job.addJob`,
 * the queue's default options under `opts`, as `Queue.add` merges them) and its one script call is
 * sent as this command with the admission's arguments (`admission`: ADMIT_SCRIPT's ARGV). Answers
 * the admission's result (1 admitted and added, 2 admitted already with its job there, 0 held).
 */
export async function admitAndAdd(request: {
  connection: IORedis;
  queue: Queue;
  name: string;
  data: unknown;
  opts: JobsOptions & { jobId: string };
  admission: readonly (string | number)[];
}): Promise<number> {
  const { connection, queue } = request;
  // addStandardJob's arguments are read after the admission's: one short or long would misplace them all
  if (request.admission.length !== ADMISSION_ARGS) throw new Error(`admitAndAdd: ${request.admission.length} admission arguments, not ${ADMISSION_ARGS}`);
  const expected = (addCommand ??= addCommandName());
  const command = (connection as unknown as Record<string, AdmitAddCommand>)[COMMAND];
  let admitted: number | null = null;
  const client = {
    runCommand: async (name: string, args: (string | Buffer)[]): Promise<unknown> => {
      if (name !== expected || args.length < ADD_KEYS) throw new Error(`admitAndAdd: BullMQ sent ${name} (${args.length} arguments), not ${expected}`);
      const [answer, added] = await command.call(connection, ...args.slice(0, ADD_KEYS), ...request.admission, ...args.slice(ADD_KEYS));
      admitted = Number(answer);
      // nothing added (held, or its job is there): a job id for addJob, which only checks for a negative code
      return admitted === 1 ? added : 0;
    },
  };
  const job = new (bullmq().Job)(queue, request.name, request.data, { ...jobsOptionsOf(queue), ...request.opts }, request.opts.jobId);
  await job.addJob(client as unknown as Parameters<Job['addJob']>[0]);
  if (admitted === null) throw new Error('admitAndAdd: BullMQ made no script call');
  return admitted;
}

/** The queue's default job options (`defaultJobOptions`), merged under a job's own as `Queue.add` merges them. */
function jobsOptionsOf(queue: Queue): JobsOptions {
  return (queue as unknown as { jobsOpts?: JobsOptions }).jobsOpts ?? {};
}
