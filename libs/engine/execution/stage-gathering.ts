import type { SessionJournal } from '../journal/journal';

/**
 * The runs of a stage started at once on one journal (the runtimes of a stage run inline, issue
 * 33), as the journal's groups of appends (`ExecutionRun`: group commit) see them. A group waits,
 * before it is made, for every sibling still on its way to an append: one doing its own work (its
 * reads, its request, its handlers and tools), not one that queued an append already, is held
 * behind the journal's chain (`blocked`: it cannot append before the group is made) or left. So
 * the first appends of the stage's runtimes (their `llm.calling`) go as ONE append of the store,
 * and so do appends its runtimes make about together after their own work (tool outcomes and
 * outputs), instead of the first alone and the others behind it. A sibling whose model call is in
 * flight (`away`) is waited for only by a group that records a model's answer (its first append is
 * that of a run whose call just came back: `queued` says so): the calls a stage sends together
 * mostly come back together, and their answers then go as one append instead of the first alone
 * and the rest behind it (issue 33); a group started by a call's `llm.calling` does not wait for a
 * provider (a sibling's `llm.calling` that joins a group waiting for calls waits with it, at most
 * the bound; one appended from inside a call in flight, the stream fallback's, releases it). Every
 * call in flight is waited for, not only those sent with the answered one: beside a long call (a
 * slow provider, a long stream) each answer of a sibling waits the bound. Nothing is built or stored while a group waits (each append is built at the
 * group's turn, from the journal as it stands then, fenced as always), nothing is run or sent by a
 * run whose append waits (an answer is stored before its tools run), and no model call is sent
 * before its `llm.calling` is stored: the wait only moves when the group is made. It is bounded
 * (`STAGE_GATHER_MS`, each wait): a sibling slow to its next append (a long handler or tool, a read,
 * a provider slow to answer) holds the others that long at most.
 */
export interface StageGathering {
  /** `member` (a run's `ref`: the job it runs) ran to its end: no group waits for it any more. */
  left(member: object): void;
  /** The stage is over: nothing waits for any of its members any more. */
  end(): void;
}

/** The longest a group of appends waits for the stage's siblings (`gatherStage`). */
export const STAGE_GATHER_MS = 25;

/**
 * Gathers the appends of `members` (the `ref` each of their runs is made with: the runtime jobs a
 * stage runs inline on `journal`), see `StageGathering`. One member alone gathers nothing.
 */
export function gatherStage(journal: SessionJournal, members: readonly object[], options: { boundMs?: number } = {}): StageGathering {
  const gathering = new Gathering(members, options.boundMs ?? STAGE_GATHER_MS, () => {
    if (gatherings.get(journal) === gathering) gatherings.delete(journal);
  });
  if (members.length > 1) gatherings.set(journal, gathering);
  return { left: (member) => gathering.left(member), end: () => gathering.close() };
}

/** The gathering of the stage running on `journal`, if any (`gatherStage`). */
export function stageGathering(journal: SessionJournal): Gathering | undefined {
  return gatherings.get(journal);
}

/** What the appends of a gathered stage tell it (`ExecutionRun`), and how its groups wait. */
export class Gathering {
  /** Members on their way to an append (their own work): a group waits for them. */
  private readonly busy: Set<object>;
  private readonly members: ReadonlySet<object>;
  private readonly gone = new Set<object>();
  /** Members with a model call in flight (how many): waited for by a group that records an answer only. */
  private readonly calling = new Map<object, number>();
  /** Members whose model call came back, on their way to the append that records its answer. */
  private readonly answered = new Set<object>();
  /** Set while a group waits: resolves it (no member busy, nor in flight when it `forCalls`; or the bound passed). */
  private waiting: { promise: Promise<void>; release: () => void; forCalls: boolean } | undefined;
  /** Groups queued on the journal's chain that have not been made yet (`waitingFor`). */
  private groups = 0;
  private open = true;

  constructor(
    members: readonly object[],
    private readonly boundMs: number,
    private readonly closed: () => void,
  ) {
    this.members = new Set(members);
    this.busy = new Set(members);
  }

  /**
   * `member` queued an append: groups wait no more for it until that append is made. True when the
   * append follows the member's model call that came back (it records the answer): a group it starts
   * waits for the siblings' calls in flight too (`waitingFor`).
   */
  queued(member: object): boolean {
    const answers = this.answered.delete(member);
    this.idle(member);
    // appended from inside its call (the stream fallback's llm.calling): that call cannot come back before the group is made
    if (this.calling.has(member) && this.waiting?.forCalls) this.release();
    return answers;
  }

  /** `member`'s append (or read) settled: it goes on with its own work, on its way to its next append. */
  resumed(member: object): void {
    if (this.open && this.members.has(member) && !this.gone.has(member) && !this.calling.get(member)) this.busy.add(member);
  }

  /** `member` queued a read on the journal's chain: behind a group that waits, it cannot append before that group is made. */
  blocked(member: object): void {
    this.answered.delete(member);
    if (this.groups > 0) this.idle(member);
  }

  /** `member`'s model call, in flight until `call` settles: no group waits for it meanwhile. */
  async away<T>(member: object, call: Promise<T>): Promise<T> {
    if (!this.members.has(member)) return call;
    this.calling.set(member, (this.calling.get(member) ?? 0) + 1);
    this.answered.delete(member);
    this.idle(member);
    try {
      return await call;
    } finally {
      const n = this.calling.get(member)! - 1;
      if (n > 0) this.calling.set(member, n);
      else {
        this.calling.delete(member);
        if (this.open && !this.gone.has(member)) this.answered.add(member);
      }
      // busy again (on its way to its append), so a group waiting for calls goes on waiting for it
      this.resumed(member);
      if (this.waiting && this.arrived(this.waiting.forCalls)) this.release();
    }
  }

  left(member: object): void {
    this.gone.add(member);
    this.answered.delete(member);
    this.idle(member);
  }

  /**
   * `write` (a group's append), made once no member is busy (and, `forCalls`: a group that records a
   * model's answer, none has a call in flight), or after the bound; until then the group counts as waiting.
   */
  waitingFor<T>(write: () => Promise<T>, forCalls = false): () => Promise<T> {
    this.groups++;
    return () =>
      this.gathered(forCalls).then(() => {
        this.groups--;
        return write();
      });
  }

  close(): void {
    this.open = false;
    this.busy.clear();
    this.closed();
    this.release();
  }

  private idle(member: object): void {
    if (this.busy.delete(member) && this.arrived(this.waiting?.forCalls ?? false)) this.release();
  }

  /** No member on its way to an append (nor, `forCalls`, with a model call in flight). */
  private arrived(forCalls: boolean): boolean {
    return this.busy.size === 0 && (!forCalls || this.calling.size === 0);
  }

  /** Resolves once no member is busy (nor in flight, `forCalls`; at once when none is), or after the bound. */
  private gathered(forCalls: boolean): Promise<void> {
    if (this.arrived(forCalls)) return Promise.resolve();
    if (!this.waiting) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      const timer = setTimeout(() => this.release(), this.boundMs);
      this.waiting = {
        promise,
        forCalls,
        release: () => {
          clearTimeout(timer);
          resolve();
        },
      };
    }
    return this.waiting.promise;
  }

  private release(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.release();
  }
}

const gatherings = new WeakMap<SessionJournal, Gathering>();
