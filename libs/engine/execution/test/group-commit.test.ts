import { randomUUID } from 'node:crypto';
import { FencedOutError } from '../../errors';
import { claimExecution, nextClaim } from '../../turn/claim';
import { ClaimingRun } from '../claiming-run';
import { ExecutionRun } from '../fenced-append';
import { gatherStage } from '../stage-gathering';
import type { ExecutionJournal } from '../../journal/journal';
import { loadSessionJournal } from '../../session/session-reads';
import { type TurnHarness, turnHarness } from '../../turn/test/harness';

/**
 * Issue 33: appends queued on one journal while an append of it is being made (sibling runtimes
 * of a stage run inline) are made together as one append of the store (group commit), each built
 * from the journal as the builds before it in the group leave it.
 */
describe('group commit of the appends queued on one journal (ExecutionRun)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness();
  });
  afterAll(() => h.close());

  /** A session's input, its journal, and runs of `runtimes` sharing it (the runtimes of an inline stage). */
  async function siblings(runtimes: readonly string[], claimed = true) {
    const session = await h.session();
    const job = await h.input(session);
    const journal = await loadSessionJournal(h.deps, job);
    if (!claimed) {
      const claim = nextClaim(h.deps, journal.get(job.executionId)!);
      return { job, journal, claim, runs: runtimes.map(() => new ClaimingRun(h.deps.store, journal, job, claim)) };
    }
    const attempt = (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))!;
    return { job, journal, runs: runtimes.map(() => new ExecutionRun(h.deps.store, journal, job, attempt)) };
  }

  /** A step-1 reply of `runtimeId`, with the reply the journal folds (so a later build can see it). */
  const responded = (e: ExecutionJournal, runtimeId: string) => ({
    type: 'llm.responded@1' as const,
    data: {
      executionId: e.executionId,
      turnId: e.turnId,
      callId: randomUUID(),
      pluginId: runtimeId,
      runtimeId,
      finishReason: 'stop',
      usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 },
      step: 1,
      reply: JSON.stringify({ text: runtimeId, toolCalls: [] }),
    },
  });
  const replied = (e: ExecutionJournal, runtimeId: string) => e.agentLoops.get(`${runtimeId}/${runtimeId}`)?.replies.has(1) ?? false;
  const runtimeOf = (e: { data: unknown }) => (e.data as { runtimeId?: string }).runtimeId;

  it('appends queued behind one in flight go as one append, in order, each built seeing those before it', async () => {
    const { job, journal, runs } = await siblings(['a', 'b', 'c', 'd']);
    const start = journal.version;
    const catchingUp = jest.spyOn(h.deps.store, 'appendCatchingUp');
    try {
      const seen: Record<string, string[]> = {};
      const append = (i: number) => {
        const id = ['a', 'b', 'c', 'd'][i];
        return runs[i].append((e) => {
          seen[id] = ['a', 'b', 'c', 'd'].filter((other) => replied(e, other));
          return [responded(e, id)];
        });
      };
      // the first starts at once (the chain is free: its build runs and its append is in flight) ...
      const first = append(0);
      while (seen.a === undefined) await Promise.resolve();
      // ... the three queued behind it are made as one when it is stored
      const versions = await Promise.all([first, append(1), append(2), append(3)]);
      expect(catchingUp.mock.calls.map(([r]) => r.events.map(runtimeOf))).toEqual([['a'], ['b', 'c', 'd']]);
      expect(seen).toEqual({ a: [], b: ['a'], c: ['a', 'b'], d: ['a', 'b', 'c'] });
      expect(versions).toEqual([start + 1, start + 2, start + 3, start + 4]);
    } finally {
      catchingUp.mockRestore();
    }
    const events = await h.events(job.sessionId);
    expect(events.slice(-4).map(runtimeOf)).toEqual(['a', 'b', 'c', 'd']);
    expect(journal.version).toBe(events.length);
    expect(['a', 'b', 'c', 'd'].every((id) => replied(journal.get(job.executionId)!, id))).toBe(true);
  });

  it('a build of the group that throws fails alone: the others are stored, and what it saw stays out of the journal', async () => {
    const { job, journal, runs } = await siblings(['a', 'b', 'c', 'd']);
    const held = journal.get(job.executionId)!;
    const results = await Promise.allSettled([
      runs[0].append((e) => [responded(e, 'a')]),
      runs[1].append((e) => [responded(e, 'b')]),
      runs[2].append(() => {
        throw new FencedOutError(job.executionId, runs[2].attempt);
      }),
      runs[3].append((e) => [responded(e, 'd')]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((await h.events(job.sessionId)).slice(-3).map(runtimeOf)).toEqual(['a', 'b', 'd']);
    // the execution read before the group is the journal's own: only stored events changed it
    expect(journal.get(job.executionId)).toBe(held);
    expect(['a', 'b', 'd'].map((id) => replied(held, id))).toEqual([true, true, true]);
    expect(replied(held, 'c')).toBe(false);
  });

  it('a group the store refuses is made again one by one: the refused events fail alone, each other append keeps its own outcome', async () => {
    const { job, journal, runs } = await siblings(['a', 'b', 'c', 'd']);
    const refused = new Error('the store refused the events of c');
    const original = h.deps.store.appendCatchingUp.bind(h.deps.store);
    const catchingUp = jest
      .spyOn(h.deps.store, 'appendCatchingUp')
      .mockImplementation((request) => (request.events.some((e) => runtimeOf(e) === 'c') ? Promise.reject(refused) : original(request)));
    let results: PromiseSettledResult<number>[];
    try {
      results = await Promise.allSettled([
        runs[0].append((e) => [responded(e, 'a')]),
        runs[1].append(() => {
          throw new FencedOutError(job.executionId, runs[1].attempt);
        }),
        runs[2].append((e) => [responded(e, 'c')]),
        runs[3].append((e) => [responded(e, 'd')]),
      ]);
      expect(catchingUp.mock.calls.map(([r]) => r.events.map(runtimeOf))).toEqual([['a', 'c', 'd'], ['a'], ['c'], ['d']]);
    } finally {
      catchingUp.mockRestore();
    }
    expect(results.map((r) => (r.status === 'fulfilled' ? 'stored' : r.reason))).toEqual(['stored', expect.any(FencedOutError), refused, 'stored']);
    const events = await h.events(job.sessionId);
    expect(events.slice(-2).map(runtimeOf)).toEqual(['a', 'd']);
    expect(journal.version).toBe(events.length);
  });

  it('a group that cannot reach the database fails whole with that error (its outcome may be unknown: nothing is tried again here)', async () => {
    const { job, journal, runs } = await siblings(['a', 'b']);
    const start = journal.version;
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const catchingUp = jest.spyOn(h.deps.store, 'appendCatchingUp').mockRejectedValue(down);
    let results: PromiseSettledResult<number>[];
    try {
      results = await Promise.allSettled([runs[0].append((e) => [responded(e, 'a')]), runs[1].append((e) => [responded(e, 'b')])]);
      expect(catchingUp).toHaveBeenCalledTimes(1);
    } finally {
      catchingUp.mockRestore();
    }
    expect(results.map((r) => (r.status === 'rejected' ? r.reason : r.value))).toEqual([down, down]);
    expect(journal.version).toBe(start);
    expect((await h.events(job.sessionId)).length).toBe(start);
  });

  it('a group others appended before is built again after what came, every build of it once more', async () => {
    const { job, journal, runs } = await siblings(['a', 'b', 'c']);
    // another writer (an input) lands first: the journal is one version behind
    const other = await h.input(job, 'meanwhile');
    const builds: string[] = [];
    const catchingUp = jest.spyOn(h.deps.store, 'appendCatchingUp');
    try {
      // queued at once (in one tick): one group, one append of the store
      await Promise.all(
        ['a', 'b', 'c'].map((id, i) =>
          runs[i].append((e) => {
            builds.push(id);
            return [responded(e, id)];
          }),
        ),
      );
      expect(catchingUp).toHaveBeenCalledTimes(1);
    } finally {
      catchingUp.mockRestore();
    }
    expect(builds).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    const events = await h.events(job.sessionId);
    expect(events.slice(-4).map((e) => runtimeOf(e) ?? e.type)).toEqual(['player-input.submitted@1', 'a', 'b', 'c']);
    expect(journal.version).toBe(events.length);
    expect(journal.get(other.executionId)?.status).toBe('pending');
    expect(['a', 'b', 'c'].every((id) => replied(journal.get(job.executionId)!, id))).toBe(true);
  });

  /** Runs of `runtimes` sharing one journal, each with a job of its own (the runtimes of a stage run inline), gathered as their stage gathers them. */
  async function stage(runtimes: readonly string[]) {
    const { job, journal } = await siblings([]);
    const attempt = journal.get(job.executionId)!.latestAttempt;
    const jobs = runtimes.map((runtimeId) => ({ ...job, pluginId: runtimeId, runtimeId }));
    // a bound no test reaches: each group below is made because every sibling arrived or left
    const gathering = gatherStage(journal, jobs, { boundMs: 600_000 });
    return { job, journal, jobs, gathering, runs: jobs.map((j) => new ExecutionRun(h.deps.store, journal, j, attempt)) };
  }
  /** A few turns of the event loop (a sibling's reads and request building between two appends). */
  const ticks = async (n = 5) => {
    for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
  };

  it('a stage’s runs gathered: an append waits for its siblings still on their way to theirs, all go as ONE append of the store', async () => {
    const { job, gathering, runs } = await stage(['a', 'b', 'c', 'd']);
    const catchingUp = jest.spyOn(h.deps.store, 'appendCatchingUp');
    try {
      const first = runs[0].append((e) => [responded(e, 'a')]);
      await ticks();
      // nothing stored yet: b and c are still on their way (d will leave without appending)
      expect(catchingUp).not.toHaveBeenCalled();
      const second = runs[1].append((e) => [responded(e, 'b')]);
      await ticks();
      const third = runs[2].append((e) => [responded(e, 'c')]);
      await ticks();
      expect(catchingUp).not.toHaveBeenCalled();
      gathering.left({});
      gathering.left(runs[3].ref);
      await Promise.all([first, second, third]);
      // was two: the first alone, the others queued behind it
      expect(catchingUp.mock.calls.map(([r]) => r.events.map(runtimeOf))).toEqual([['a', 'b', 'c']]);
      // a and c ran to their end: b's next append waits for nobody
      gathering.left(runs[0].ref);
      gathering.left(runs[2].ref);
      await runs[1].append((e) => [responded(e, 'd')]);
      expect(catchingUp).toHaveBeenCalledTimes(2);
    } finally {
      catchingUp.mockRestore();
      gathering.end();
    }
    expect((await h.events(job.sessionId)).slice(-4).map(runtimeOf)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a sibling that reads the log behind the waiting group counts as arrived (it cannot append before it): no wait for the bound', async () => {
    const { gathering, runs } = await stage(['a', 'b']);
    const catchingUp = jest.spyOn(h.deps.store, 'appendCatchingUp');
    try {
      const first = runs[0].append((e) => [responded(e, 'a')]);
      await ticks();
      expect(catchingUp).not.toHaveBeenCalled();
      // b's catch-up read is queued behind a's group: the group is made, then the read, then b's append
      const read = runs[1].refresh();
      await Promise.all([first, read]);
      gathering.left(runs[0].ref); // a ran to its end
      await runs[1].append((e) => [responded(e, 'b')]);
      expect(catchingUp.mock.calls.map(([r]) => r.events.map(runtimeOf))).toEqual([['a'], ['b']]);
    } finally {
      catchingUp.mockRestore();
      gathering.end();
    }
  });

  it('a sibling whose model call is in flight is not waited for; once it answers, the next group waits for its append', async () => {
    const { gathering, runs } = await stage(['a', 'b', 'c']);
    const catchingUp = jest.spyOn(h.deps.store, 'appendCatchingUp');
    let answer!: (reply: string) => void;
    try {
      gathering.left(runs[2].ref);
      // b's call is in flight: a's append goes at once, alone
      const call = runs[1].sending(new Promise<string>((resolve) => (answer = resolve)));
      await runs[0].append((e) => [responded(e, 'a')]);
      expect(catchingUp.mock.calls.map(([r]) => r.events.map(runtimeOf))).toEqual([['a']]);
      // b answers: a's next append waits for b's (its own work, then its append), one append for both
      answer('b');
      const next = runs[0].append((e) => [responded(e, 'c')]);
      await ticks();
      expect(catchingUp).toHaveBeenCalledTimes(1);
      await call;
      await Promise.all([next, runs[1].append((e) => [responded(e, 'b')])]);
      expect(catchingUp.mock.calls.map(([r]) => r.events.map(runtimeOf))).toEqual([['a'], ['c', 'b']]);
    } finally {
      catchingUp.mockRestore();
      gathering.end();
    }
  });

  it('an append recording a model’s answer waits for the siblings’ calls in flight: the answers of calls sent together go as ONE append', async () => {
    const { gathering, runs } = await stage(['a', 'b', 'c']);
    const catchingUp = jest.spyOn(h.deps.store, 'appendCatchingUp');
    const answers: ((reply: string) => void)[] = [];
    const send = (i: number) => runs[i].sending(new Promise<string>((resolve) => (answers[i] = resolve)));
    try {
      gathering.left(runs[2].ref);
      // a and b sent their calls together (their llm.calling stored)
      const [callA, callB] = [send(0), send(1)];
      answers[0]('a');
      await callA;
      // a's answer is recorded: its group waits for b's call, still in flight (was: a alone, b's answer behind it)
      const first = runs[0].append((e) => [responded(e, 'a')]);
      await ticks();
      expect(catchingUp).not.toHaveBeenCalled();
      answers[1]('b');
      await callB;
      await Promise.all([first, runs[1].append((e) => [responded(e, 'b')])]);
      expect(catchingUp.mock.calls.map(([r]) => r.events.map(runtimeOf))).toEqual([['a', 'b']]);
      // a's next append (its tool's outcome) records no answer: made at once, b's call in flight again is not waited for
      const again = send(1);
      await runs[0].append((e) => [responded(e, 'c')]);
      expect(catchingUp).toHaveBeenCalledTimes(2);
      answers[1]('b');
      await again;
    } finally {
      catchingUp.mockRestore();
      gathering.end();
    }
  });

  it('a group recording an answer waits for a call in flight no longer than the bound', async () => {
    const { job, journal } = await siblings([]);
    const attempt = journal.get(job.executionId)!.latestAttempt;
    const jobs = ['a', 'b'].map((runtimeId) => ({ ...job, pluginId: runtimeId, runtimeId }));
    const gathering = gatherStage(journal, jobs, { boundMs: 1 });
    const [a, b] = jobs.map((j) => new ExecutionRun(h.deps.store, journal, j, attempt));
    let answerB!: (reply: string) => void;
    try {
      const callB = b.sending(new Promise<string>((resolve) => (answerB = resolve)));
      await a.sending(Promise.resolve('a'));
      // b's provider never answers meanwhile: a's answer is stored after the bound
      await expect(a.append((e) => [responded(e, 'a')])).resolves.toBeGreaterThan(0);
      answerB('b');
      await callB;
    } finally {
      gathering.end();
    }
  });

  it('a sibling whose call in flight appends (the stream fallback records its llm.calling) does not hold a group recording an answer', async () => {
    const { gathering, runs } = await stage(['a', 'b']);
    let answerA!: (reply: string) => void;
    let fallbackDue!: () => void;
    let fallbackStored = false;
    try {
      const callA = runs[0].sending(new Promise<string>((resolve) => (answerA = resolve)));
      // b's call: its stream is refused, the fallback's llm.calling is recorded (an append), then sent
      const callB = runs[1].sending(
        (async () => {
          await new Promise<void>((resolve) => (fallbackDue = resolve));
          await runs[1].append((e) => [responded(e, 'b-fallback')]);
          fallbackStored = true;
          return 'b';
        })(),
      );
      answerA('a');
      await callA;
      // a's run ends after its answer (nothing else of it to wait for)
      const first = runs[0].append((e) => [responded(e, 'a')]).then(() => gathering.left(runs[0].ref));
      await ticks();
      fallbackDue();
      // held by a's group (waiting for b's call, which waits for that group) it would come only at the bound (none here)
      await callB;
      expect(fallbackStored).toBe(true);
      await first;
    } finally {
      gathering.end();
    }
  });

  it('the stage’s end releases a waiting group', async () => {
    const { gathering, runs } = await stage(['a', 'b']);
    const first = runs[0].append((e) => [responded(e, 'a')]);
    await ticks();
    gathering.end();
    await expect(first).resolves.toBeGreaterThan(0);
  });

  it('runs sharing a pending claim: the group carries it once, in front of its first events', async () => {
    const { job, claim, runs } = await siblings(['a', 'b', 'c'], false);
    const catchingUp = jest.spyOn(h.deps.store, 'appendCatchingUp');
    try {
      // the first builds nothing (carries no claim), the two queued behind it go as one
      await Promise.all([runs[0].append(() => []), runs[1].append((e) => [responded(e, 'b')]), runs[2].append((e) => [responded(e, 'c')])]);
      expect(catchingUp.mock.calls.map(([r]) => r.events.map((e) => runtimeOf(e) ?? e.type))).toEqual([['execution.started@1', 'b', 'c']]);
    } finally {
      catchingUp.mockRestore();
    }
    expect(claim!.landed).toBe(true);
    const events = await h.events(job.sessionId);
    expect(events.filter((e) => e.type === 'execution.started@1')).toHaveLength(1);
    expect(runs[2].execution.latestAttempt).toBe(claim!.attempt);
  });
});
