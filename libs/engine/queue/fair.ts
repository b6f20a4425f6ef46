import type { FairnessOptions, TurnJob } from './port';

/**
 * Fair scheduling across tenants: an admission layer in front of the shared turn queue. An
 * execution is admitted (its turn job added to the queue) when fewer than `window` executions are
 * admitted across all tenants and its tenant has fewer than its cap in flight; otherwise it is held
 * on its tenant's ready list (FIFO). When an admitted execution's turn job ends for good (done, or
 * failed for good), it is released and the window's room goes round robin across the tenants that
 * have held executions, skipping those at their cap. Work-conserving: one tenant alone may fill the
 * whole window. A turn job waiting for its children or delayed (`later`, a retry's backoff) stays
 * admitted; its runtime children are part of its admission. World generation jobs are not admitted
 * (their own queue and workers).
 *
 * Two implementations of the same policy: `MemoryAdmission` (the in-process driver) and the Lua
 * scripts below (BullMQ: every admission decision is one atomic script call on Redis).
 */

/** The cap an enqueue applies: the tenant's own, else the default; 0 means none. A failing source means the default. */
export async function capOf(options: FairnessOptions | undefined, tenantId: string): Promise<number> {
  let own: number | null = null;
  try {
    own = (await options?.tenantCaps?.maxInFlight(tenantId)) ?? null;
  } catch {
    own = null;
  }
  const cap = own ?? options?.tenantMaxInFlight ?? 0;
  return Number.isFinite(cap) && cap > 0 ? Math.floor(cap) : 0;
}

/** A held or admitted job, with when it was enqueued (its wait, held time included, is measured from then). */
export interface Admitted {
  job: TurnJob;
  enqueuedAt: number;
}

/** The in-memory admission of the in-process driver: the same policy as the Redis scripts. */
export class MemoryAdmission {
  private readonly admitted = new Map<string, string>(); // executionId → tenantId
  private readonly inFlight = new Map<string, number>();
  private readonly held = new Set<string>();
  private readonly ready = new Map<string, Admitted[]>();
  /** Tenants with held executions and room under their cap, in round-robin order. */
  private ring: string[] = [];
  /** Tenants with held executions at their cap: back on the ring when a release brings them below it. */
  private readonly parked = new Set<string>();
  private readonly caps = new Map<string, number>();

  constructor(private readonly window: number) {}

  /** Whether the execution is held or admitted (an enqueue of it adds nothing). */
  has(executionId: string): boolean {
    return this.held.has(executionId) || this.admitted.has(executionId);
  }

  get heldCount(): number {
    return this.held.size;
  }

  /** Admits the job now (true) or holds it behind its tenant's earlier ones (false). `cap` 0: none. */
  enqueue(job: TurnJob, cap: number, enqueuedAt = Date.now()): boolean {
    this.caps.set(job.tenantId, cap);
    this.unpark(job.tenantId);
    const queue = this.ready.get(job.tenantId);
    if (!queue?.length && this.room() && this.tenantRoom(job.tenantId)) {
      this.admit(job);
      return true;
    }
    this.held.add(job.executionId);
    if (queue?.length) queue.push({ job, enqueuedAt });
    else {
      this.ready.set(job.tenantId, [{ job, enqueuedAt }]);
      if (this.tenantRoom(job.tenantId)) this.ring.push(job.tenantId);
      else this.parked.add(job.tenantId);
    }
    return false;
  }

  /** The execution's job has ended for good: frees its place; the jobs admitted in its stead. */
  release(job: Pick<TurnJob, 'executionId' | 'tenantId'>): Admitted[] {
    if (this.admitted.get(job.executionId) === job.tenantId) {
      this.admitted.delete(job.executionId);
      this.inFlight.set(job.tenantId, (this.inFlight.get(job.tenantId) ?? 1) - 1);
      this.unpark(job.tenantId);
    }
    return this.dispatch();
  }

  /** Round robin over the ring; a tenant found at its cap is parked (each step admits or drops one tenant: O(k + n)). */
  private dispatch(): Admitted[] {
    const out: Admitted[] = [];
    while (this.room() && this.ring.length > 0) {
      const tenant = this.ring.shift()!;
      const queue = this.ready.get(tenant) ?? [];
      if (!this.tenantRoom(tenant)) {
        if (queue.length) this.parked.add(tenant);
        continue;
      }
      const next = queue.shift();
      if (next) {
        this.held.delete(next.job.executionId);
        this.admit(next.job);
        out.push(next);
      }
      if (queue.length) this.ring.push(tenant);
      else this.ready.delete(tenant);
    }
    return out;
  }

  private unpark(tenant: string) {
    if (this.parked.has(tenant) && this.tenantRoom(tenant)) {
      this.parked.delete(tenant);
      this.ring.push(tenant);
    }
  }

  private admit(job: TurnJob) {
    this.admitted.set(job.executionId, job.tenantId);
    this.inFlight.set(job.tenantId, (this.inFlight.get(job.tenantId) ?? 0) + 1);
  }

  private room(): boolean {
    return this.admitted.size < this.window;
  }

  private tenantRoom(tenant: string): boolean {
    const cap = this.caps.get(tenant) ?? 0;
    return cap <= 0 || (this.inFlight.get(tenant) ?? 0) < cap;
  }
}

/**
 * The Redis side (BullMQ driver). Keys under `<prefix>:fair:`: `admitted` (zset of members
 * `<length of tenant>:<tenant>|<execution>` → when admitted or last seen alive, ms; the length makes
 * the encoding unambiguous whatever the ids hold), `held` (set of held execution ids), `again` (hash
 * execution → the job's JSON: an enqueue made while its turn job ran, made anew by its release, or
 * by the tick that frees its place when that release never came),
 * `ring` (list of tenants with held executions and room under their cap, round robin), `parked` (set of tenants
 * with held executions at their cap: a release that brings one below its cap puts it back on the
 * ring, so a dispatch never walks capped tenants), `caps` (hash tenant → cap, 0 none: stored at each
 * enqueue so a dispatch in another process applies it), `window` (the auto window, with an expiry),
 * `window:last` (the last auto window, without one), `workers` (hash consumer →
 * `expiresAt|concurrency`), `tenants` (set of tenants with an `inflight` set), and per tenant
 * `ready:<tenant>` (list of held jobs' JSON, FIFO) and `inflight:<tenant>` (set of admitted
 * execution ids: a tick rebuilds them all from `admitted`, so they never drift). Tenant keys are
 * built inside the scripts: on Redis Cluster the prefix needs a hash tag (as BullMQ's own keys do).
 *
 * Every script's ARGV starts with: base (`<prefix>:fair`), window (0: the auto window), default cap,
 * the turn jobs' key prefix (`<prefix>:covel-turns:`). The auto window is the live consumers' total
 * concurrency; when they are all gone (a redeploy, a crash loop, producers up before the workers)
 * the last total known stands. Only when no consumer has ever registered is there no window: jobs
 * are admitted as before this layer (a producer upgraded before its workers holds nothing).
 */
const COMMON = `
local base = ARGV[1]
local givenWindow = tonumber(ARGV[2])
local defaultCap = tonumber(ARGV[3])
local jobPrefix = ARGV[4]
local admittedKey = base .. ':admitted'
local heldKey = base .. ':held'
local ringKey = base .. ':ring'
local parkedKey = base .. ':parked'
local capsKey = base .. ':caps'
local tenantsKey = base .. ':tenants'
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function windowOf()
  if givenWindow > 0 then return givenWindow end
  local auto = tonumber(redis.call('GET', base .. ':window'))
  if auto then return auto end
  local last = tonumber(redis.call('GET', base .. ':window:last'))
  if last then return last end
  return -1
end
local function room(window)
  return window < 0 or redis.call('ZCARD', admittedKey) < window
end
local function memberOf(tenant, execution)
  return string.len(tenant) .. ':' .. tenant .. '|' .. execution
end
local function parseMember(member)
  local n, rest = string.match(member, '^(%d+):(.*)$')
  if not n then return nil, nil end
  n = tonumber(n)
  if string.sub(rest, n + 1, n + 1) ~= '|' then return nil, nil end
  return string.sub(rest, 1, n), string.sub(rest, n + 2)
end
local function inflightKey(tenant)
  return base .. ':inflight:' .. tenant
end
local againKey = base .. ':again'
local function jobKeyOf(execution)
  return jobPrefix .. 'turn-' .. (string.gsub(execution, ':', '_'))
end
local function unfinishedJob(execution)
  local key = jobKeyOf(execution)
  return redis.call('EXISTS', key) == 1 and redis.call('HEXISTS', key, 'finishedOn') == 0
end
local function capOf(tenant)
  local cap = tonumber(redis.call('HGET', capsKey, tenant))
  if cap == nil then return defaultCap end
  return cap
end
local function tenantRoom(tenant, cap)
  return cap <= 0 or redis.call('SCARD', inflightKey(tenant)) < cap
end
local function unpark(tenant)
  if redis.call('SISMEMBER', parkedKey, tenant) == 1 and tenantRoom(tenant, capOf(tenant)) then
    redis.call('SREM', parkedKey, tenant)
    redis.call('RPUSH', ringKey, tenant)
  end
end
local function admit(tenant, execution, at)
  redis.call('ZADD', admittedKey, at, memberOf(tenant, execution))
  redis.call('SADD', inflightKey(tenant), execution)
  redis.call('SADD', tenantsKey, tenant)
end
-- frees the execution's place; answers the enqueue kept while its job ran (nil: none), for the caller to make anew
local function release(tenant, execution)
  local again = redis.call('HGET', againKey, execution)
  if again then redis.call('HDEL', againKey, execution) end
  redis.call('ZREM', admittedKey, memberOf(tenant, execution))
  redis.call('SREM', inflightKey(tenant), execution)
  if redis.call('SCARD', inflightKey(tenant)) == 0 then redis.call('SREM', tenantsKey, tenant) end
  unpark(tenant)
  return again
end
local function dispatch(out)
  local window = windowOf()
  local at = now()
  while room(window) do
    local tenant = redis.call('LPOP', ringKey)
    if not tenant then break end
    local readyKey = base .. ':ready:' .. tenant
    if tenantRoom(tenant, capOf(tenant)) then
      local payload = redis.call('LPOP', readyKey)
      if payload then
        local execution = cjson.decode(payload).executionId
        redis.call('SREM', heldKey, execution)
        admit(tenant, execution, at)
        out[#out + 1] = payload
      end
      if redis.call('LLEN', readyKey) > 0 then redis.call('RPUSH', ringKey, tenant) end
    elseif redis.call('LLEN', readyKey) > 0 then
      redis.call('SADD', parkedKey, tenant)
    end
  end
  return out
end
-- an enqueue: 1 admitted (now, or already but its turn job is gone or finished: the caller adds it),
-- 2 admitted already and its turn job is there, 0 held (now or already). With keep (a producer's
-- enqueue, not a turn job's hand-off), a turn job there that a worker runs (its lock held) may
-- have read the log before what this enqueue is for (a resume appended since): the enqueue is kept
-- (again) and made anew by the job's release (or the tick's). A hand-off's next execution runs only once it is its
-- session's head: a run of it under way read the log after the hand-off's cause (and a hand-off by
-- such a kept run of an ended execution would keep the next one's in turn, and so on).
local function enqueue(tenant, execution, payload, cap, keep)
  if redis.call('ZSCORE', admittedKey, memberOf(tenant, execution)) then
    if unfinishedJob(execution) then
      if keep and redis.call('EXISTS', jobKeyOf(execution) .. ':lock') == 1 then redis.call('HSET', againKey, execution, payload) end
      return 2
    end
    return 1
  end
  if redis.call('SISMEMBER', heldKey, execution) == 1 then return 0 end
  redis.call('HSET', capsKey, tenant, cap)
  unpark(tenant)
  local readyKey = base .. ':ready:' .. tenant
  if redis.call('LLEN', readyKey) == 0 and room(windowOf()) and tenantRoom(tenant, cap) then
    admit(tenant, execution, now())
    return 1
  end
  redis.call('SADD', heldKey, execution)
  if redis.call('RPUSH', readyKey, payload) == 1 then
    if tenantRoom(tenant, cap) then redis.call('RPUSH', ringKey, tenant) else redis.call('SADD', parkedKey, tenant) end
  end
  return 0
end
local function register(name, concurrency, ttl, at)
  local workersKey = base .. ':workers'
  if concurrency > 0 then redis.call('HSET', workersKey, name, (at + ttl) .. '|' .. concurrency) end
  local total = 0
  local entries = redis.call('HGETALL', workersKey)
  for i = 1, #entries, 2 do
    local expires, c = string.match(entries[i + 1], '^(%d+)|(%d+)$')
    if expires and tonumber(expires) > at then total = total + tonumber(c) else redis.call('HDEL', workersKey, entries[i]) end
  end
  if total > 0 then
    redis.call('SET', base .. ':window', total, 'PX', ttl)
    redis.call('SET', base .. ':window:last', total)
  else
    redis.call('DEL', base .. ':window')
  end
end
`;

/** The functions every admission script starts with (ARGV[1..4] as `fairArgs`), for a script made of them and more (admit-add.ts). */
export const FAIR_FUNCTIONS = COMMON;

/**
 * enqueue. ARGV[5..9]: tenant, execution, the job's JSON, the tenant's cap (0: none), 1 for a
 * producer's enqueue (kept when its turn job runs, see `enqueue`), 0 for a turn job's hand-off (on
 * any of its paths: never kept). Answers 1:
 * admitted (now, or already but its turn job is gone or finished: the caller adds the job, which
 * also mends an admission whose add was lost), 2: admitted already and its turn job is there
 * (nothing to add), 0: held (now or already).
 */
export const ADMIT_SCRIPT = `${COMMON}
return enqueue(ARGV[5], ARGV[6], ARGV[7], tonumber(ARGV[8]), ARGV[9] == '1')
`;

/**
 * release, once the execution's turn job has ended for good and BullMQ has removed it. ARGV[5..6]:
 * tenant, execution. An unfinished turn job of the execution found there is a new one (enqueued
 * between the old one's removal and this call, admitted on the old one's place): the place stays
 * with it. Optionally ARGV[7..10], the enqueue of the session's next execution its turn job handed
 * off to (tenant, execution, the job's JSON, the tenant's cap: as ADMIT_SCRIPT's), made after the
 * release and its dispatch (the executions held before it keep their turn): one call instead of two.
 * An enqueue of the execution kept while its job ran (`again`, see `enqueue`) is made anew after
 * the release and its dispatch, as an enqueue then would be (admitted, or held behind those held
 * before it), before the hand-off's. Answers the JSON of the jobs admitted (the next execution's among them when admitted).
 */
export const RELEASE_SCRIPT = `${COMMON}
local tenant, execution = ARGV[5], ARGV[6]
local again = nil
if not unfinishedJob(execution) then again = release(tenant, execution) end
local out = dispatch({})
if again and enqueue(tenant, execution, again, capOf(tenant)) == 1 then out[#out + 1] = again end
if ARGV[7] and enqueue(ARGV[7], ARGV[8], ARGV[9], tonumber(ARGV[10])) == 1 then out[#out + 1] = ARGV[9] end
return out
`;

/**
 * A consumer's periodic tick. ARGV[5..8]: this consumer's name, its concurrency, how long its
 * registration lasts (ms), how old an admission must be to be checked (ms). Registers the consumer
 * and sets the auto window (the live consumers' total concurrency, also kept as the last known);
 * releases admitted executions not seen alive for that long whose turn job is gone or finished (a
 * process that died between admitting and adding or before its release, a release call that
 * failed, a job removed by hand), re-marking the others as seen; rebuilds the
 * tenants' in-flight sets from the admitted ones; puts back on the ring the parked tenants below
 * their cap (a cap raised); then dispatches. An enqueue kept while the job of an execution it
 * frees ran (`again`: its release lost with a process dying between the job's end and its release,
 * or a release call that failed) is made anew after the dispatch, as the release would have made
 * it. Answers { released, ...the JSON of the jobs admitted }.
 */
export const TICK_SCRIPT = `${COMMON}
local name, concurrency, ttl, staleMs = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local at = now()
register(name, concurrency, ttl, at)
local released = 0
local kept = {}
local old = redis.call('ZRANGEBYSCORE', admittedKey, '-inf', at - staleMs, 'LIMIT', 0, 200)
for _, member in ipairs(old) do
  local tenant, execution = parseMember(member)
  if not tenant then
    redis.call('ZREM', admittedKey, member)
  elseif unfinishedJob(execution) then
    redis.call('ZADD', admittedKey, 'XX', at, member)
  else
    local again = release(tenant, execution)
    if again then kept[#kept + 1] = { tenant, execution, again } end
    released = released + 1
  end
end
for _, tenant in ipairs(redis.call('SMEMBERS', tenantsKey)) do redis.call('DEL', inflightKey(tenant)) end
redis.call('DEL', tenantsKey)
for _, member in ipairs(redis.call('ZRANGE', admittedKey, 0, -1)) do
  local tenant, execution = parseMember(member)
  if tenant then
    redis.call('SADD', inflightKey(tenant), execution)
    redis.call('SADD', tenantsKey, tenant)
  end
end
for _, tenant in ipairs(redis.call('SMEMBERS', parkedKey)) do unpark(tenant) end
local out = dispatch({ released })
for _, k in ipairs(kept) do
  if enqueue(k[1], k[2], k[3], capOf(k[1])) == 1 then out[#out + 1] = k[3] end
end
return out
`;

/**
 * A consumer's leaving: its registration is dropped and the auto window set to the consumers left
 * (the last known stays when none is). ARGV[5..6]: its name, how long a registration lasts (ms).
 */
export const LEAVE_SCRIPT = `${COMMON}
redis.call('HDEL', base .. ':workers', ARGV[5])
register(ARGV[5], 0, tonumber(ARGV[6]), now())
return 0
`;
