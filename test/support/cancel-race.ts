import type { PlayClient } from '../../apps/play/play-client';
import type { StoredEvent } from '../../libs/events';
import { endsOf, postCancel, SHORT_STORY, sleep } from './cancel';
import { openEventStream, type ReceivedEvent } from './sse-client';

export interface RaceSetup {
  client: PlayClient;
  baseUrl: string;
  apiKey: string;
  /** A new session that runs the narrator alone (its reply streamed a word at a time). */
  newSession(): Promise<string>;
  readStream(sessionId: string): Promise<StoredEvent[]>;
}

export interface RaceOutcome {
  executionId: string;
  /** The cancel's answer: 200 (it won) or 409 (the commit won). */
  answer: number;
  /** How the execution ended, as the API reports it. */
  status: string;
  ends: { committed: number; cancelled: number };
  keepPartial: boolean;
  /** The texts of the turn as the cancel kept it (its answer's `messages`; none: nothing kept). */
  kept: string[];
  /** The texts of the turn in the history (`GET …/messages`). */
  history: string[];
}

/**
 * `count` races of a cancel against the commit, one turn each, the cancel sent `delay` ms after the
 * turn's first streamed word. The delay looks for the moment the two meet, as a bisection that goes
 * on: later after a cancel won, earlier after the commit won, its step halved at each change of
 * winner (from `firstStepMs`, down to 1 ms), so the races stay where the commit happens.
 * Each race reports how it ended, for the caller to check that it ended as exactly one of the two.
 */
export async function raceCancelsAgainstCommits(setup: RaceSetup, count: number, options: { firstStepMs?: number } = {}): Promise<RaceOutcome[]> {
  const outcomes: RaceOutcome[] = [];
  let delay = 0;
  let step = options.firstStepMs ?? 64;
  for (let i = 0; i < count; i++) {
    const outcome = await race(setup, delay, i % 2 === 1, i);
    const previous = outcomes.at(-1);
    outcomes.push(outcome);
    if (previous && previous.status !== outcome.status) step = Math.max(1, Math.floor(step / 2));
    delay = Math.max(0, delay + (outcome.status === 'cancelled' ? step : -step));
  }
  return outcomes;
}

async function race(setup: RaceSetup, delayMs: number, keepPartial: boolean, n: number): Promise<RaceOutcome> {
  const sessionId = await setup.newSession();
  const stream = await openEventStream(setup.client, sessionId);
  try {
    const { executionId, turnId } = await setup.client.submit(sessionId, `Race ${n}`);
    await stream.until((e: ReceivedEvent) => e.data.executionId === executionId && e.type === 'delta');
    await sleep(delayMs);
    const answer = await postCancel(setup.baseUrl, setup.apiKey, executionId, { body: { keepPartial } });
    const status = await setup.client.waitFor(executionId, 30_000);
    const ends = endsOf(await setup.readStream(sessionId), executionId);
    if (answer.status === 409 && !String(answer.body.message).includes('committed'))
      throw new Error(`race ${n}: 409 without naming the commit: ${JSON.stringify(answer.body)}`);
    if (answer.status !== 200 && answer.status !== 409) throw new Error(`race ${n}: cancel answered ${answer.status} ${JSON.stringify(answer.body)}`);
    const kept = ((answer.body.messages as { text: string }[] | undefined) ?? []).map((m) => m.text);
    const history = (await setup.client.messages(sessionId)).filter((m) => m.turnId === turnId).map((m) => m.text);
    return { executionId, answer: answer.status, status, ends, keepPartial, kept, history };
  } finally {
    stream.close();
  }
}

/**
 * Each race ended as exactly one of the two (a commit xor a cancel) and everything agrees: the
 * cancel's answer, the execution's status, the history (the commit's messages, the kept ones, or
 * none); and the races met the commit, both ends happened.
 */
export function expectOneEndEach(outcomes: readonly RaceOutcome[]): void {
  for (const o of outcomes) {
    expect(o.ends.committed + o.ends.cancelled).toBe(1);
    expect(o.status).toBe(o.ends.cancelled === 1 ? 'cancelled' : 'committed');
    expect(o.answer).toBe(o.status === 'cancelled' ? 200 : 409);
    if (o.status === 'committed') expect(o.history).toEqual([expect.stringMatching(/^Race \d+$/), SHORT_STORY]);
    else if (!o.keepPartial) expect(o.history).toEqual([]);
    else {
      // the client saw a word before it cancelled: there was story text to keep
      expect(o.kept).toEqual([expect.stringMatching(/^Race \d+$/), expect.any(String)]);
      expect(o.kept[1] !== '' && SHORT_STORY.startsWith(o.kept[1])).toBe(true);
      expect(o.history).toEqual(o.kept);
    }
  }
  expect(outcomes.filter((o) => o.status === 'cancelled').length).toBeGreaterThan(0);
  expect(outcomes.filter((o) => o.status === 'committed').length).toBeGreaterThan(0);
}
