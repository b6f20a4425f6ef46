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

/** The in-memory admission of the in-process driver: the same policy as the Redis scripts. */
export class MemoryAdmission {
  private readonly admitted = new Map<string, string>(); // executionId → tenantId
  private readonly inFlight = new Map<string, number>();
  private readonly held = new Set<string>();
  private readonly ready = new Map<string, TurnJob[]>();
  /** Tenants with held executions, in round-robin order. */
  private ring: string[] = [];
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
  enqueue(job: TurnJob, cap: number): boolean {
    this.caps.set(job.tenantId, cap);
    const queue = this.ready.get(job.tenantId);
    if (!queue?.length && this.room() && this.tenantRoom(job.tenantId)) {
      this.admit(job);
      return true;
    }
    this.held.add(job.executionId);
    if (queue?.length) queue.push(job);
    else {
      this.ready.set(job.tenantId, [job]);
      this.ring.push(job.tenantId);
    }
    return false;
  }

  /** The execution's job has ended for good: frees its place; the jobs admitted in its stead. */
  release(job: Pick<TurnJob, 'executionId' | 'tenantId'>): TurnJob[] {
    if (this.admitted.get(job.executionId) === job.tenantId) {
      this.admitted.delete(job.executionId);
      this.inFlight.set(job.tenantId, (this.inFlight.get(job.tenantId) ?? 1) - 1);
    }
    return this.dispatch();
  }

  private dispatch(): TurnJob[] {
    const out: TurnJob[] = [];
    let misses = 0;
    while (this.room() && this.ring.length > 0 && misses < this.ring.length) {
      const tenant = this.ring.shift()!;
      const queue = this.ready.get(tenant) ?? [];
      if (!this.tenantRoom(tenant)) {
        this.ring.push(tenant);
        misses++;
        continue;
      }
      const job = queue.shift();
      if (job) {
        this.held.delete(job.executionId);
        this.admit(job);
        out.push(job);
        misses = 0;
      }
      if (queue.length) this.ring.push(tenant);
      else this.ready.delete(tenant);
    }
    return out;
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
 * The Redis side (BullMQ driver). Keys under `<prefix>:fair:`: `admitted` (zset of
 * `tenant|execution` → when admitted or last seen alive, ms), `held` (set of held execution ids),
 * `ring` (list of tenants with held executions), `caps` (hash tenant → cap, 0 none: stored at each
 * enqueue so a dispatch in another process applies it), `window` (the auto window, with an expiry),
 * `workers` (hash consumer → `expiresAt|concurrency`), and per tenant `ready:<tenant>` (list of held
 * jobs' JSON, FIFO) and `inflight:<tenant>` (set of admitted execution ids). Tenant keys are built
 * inside the scripts: on Redis Cluster the prefix needs a hash tag (as BullMQ's own keys do).
 *
 * Every script's ARGV starts with: base (`<prefix>:fair`), window (0: the auto window), default cap.
 * An auto window that no consumer has registered (or whose consumers are all gone) means no window:
 * jobs are admitted as before this layer (a producer upgraded before its workers holds nothing).
 */
const COMMON = `
local base = ARGV[1]
local givenWindow = tonumber(ARGV[2])
local defaultCap = tonumber(ARGV[3])
local admittedKey = base .. ':admitted'
local heldKey = base .. ':held'
local ringKey = base .. ':ring'
local capsKey = base .. ':caps'
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function windowOf()
  if givenWindow > 0 then return givenWindow end
  local auto = tonumber(redis.call('GET', base .. ':window'))
  if auto then return auto end
  return -1
end
local function room(window)
  return window < 0 or redis.call('ZCARD', admittedKey) < window
end
local function capOf(tenant)
  local cap = tonumber(redis.call('HGET', capsKey, tenant))
  if cap == nil then return defaultCap end
  return cap
end
local function tenantRoom(tenant, cap)
  return cap <= 0 or redis.call('SCARD', base .. ':inflight:' .. tenant) < cap
end
local function admit(tenant, execution, at)
  redis.call('ZADD', admittedKey, at, tenant .. '|' .. execution)
  redis.call('SADD', base .. ':inflight:' .. tenant, execution)
end
local function release(tenant, execution)
  redis.call('ZREM', admittedKey, tenant .. '|' .. execution)
  redis.call('SREM', base .. ':inflight:' .. tenant, execution)
end
local function dispatch(out)
  local window = windowOf()
  local at = now()
  local misses = 0
  while room(window) do
    local n = redis.call('LLEN', ringKey)
    if n == 0 or misses >= n then break end
    local tenant = redis.call('LPOP', ringKey)
    local readyKey = base .. ':ready:' .. tenant
    if tenantRoom(tenant, capOf(tenant)) then
      local payload = redis.call('LPOP', readyKey)
      if payload then
        local execution = cjson.decode(payload).executionId
        redis.call('SREM', heldKey, execution)
        admit(tenant, execution, at)
        out[#out + 1] = payload
        misses = 0
      end
      if redis.call('LLEN', readyKey) > 0 then redis.call('RPUSH', ringKey, tenant) end
    else
      redis.call('RPUSH', ringKey, tenant)
      misses = misses + 1
    end
  end
  return out
end
`;

/**
 * enqueue. ARGV[4..7]: tenant, execution, the job's JSON, the tenant's cap (0: none). Answers 1:
 * admitted (now, or already: the caller adds the job, idempotent by its id, which also mends an
 * admission whose add was lost), 0: held (now or already).
 */
export const ADMIT_SCRIPT = `${COMMON}
local tenant, execution, payload, cap = ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7])
if redis.call('ZSCORE', admittedKey, tenant .. '|' .. execution) then return 1 end
if redis.call('SISMEMBER', heldKey, execution) == 1 then return 0 end
redis.call('HSET', capsKey, tenant, cap)
local readyKey = base .. ':ready:' .. tenant
if redis.call('LLEN', readyKey) == 0 and room(windowOf()) and tenantRoom(tenant, cap) then
  admit(tenant, execution, now())
  return 1
end
redis.call('SADD', heldKey, execution)
if redis.call('RPUSH', readyKey, payload) == 1 then redis.call('RPUSH', ringKey, tenant) end
return 0
`;

/** release. ARGV[4..5]: tenant, execution. Answers the JSON of the jobs admitted in its stead. */
export const RELEASE_SCRIPT = `${COMMON}
release(ARGV[4], ARGV[5])
return dispatch({})
`;

/**
 * A consumer's periodic tick. ARGV[4..8]: this consumer's name, its concurrency, how long its
 * registration lasts (ms), how old an admission must be to be checked (ms), the turn jobs' key
 * prefix (`<prefix>:covel-turns:`). Registers the consumer and sets the auto window (the live
 * consumers' total concurrency); releases admitted executions not seen alive for that long whose
 * turn job is gone or finished (a process that died between admitting and adding, a job failed for
 * good by the stalled-job check), re-marking the others as seen; then dispatches. Answers
 * { released, ...the JSON of the jobs admitted }.
 */
export const TICK_SCRIPT = `${COMMON}
local name, concurrency, ttl, staleMs, jobPrefix = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
local at = now()
local workersKey = base .. ':workers'
if concurrency > 0 then redis.call('HSET', workersKey, name, (at + ttl) .. '|' .. concurrency) end
local total = 0
local entries = redis.call('HGETALL', workersKey)
for i = 1, #entries, 2 do
  local expires, c = string.match(entries[i + 1], '^(%d+)|(%d+)$')
  if expires and tonumber(expires) > at then total = total + tonumber(c) else redis.call('HDEL', workersKey, entries[i]) end
end
if total > 0 then redis.call('SET', base .. ':window', total, 'PX', ttl) end
local released = 0
local old = redis.call('ZRANGEBYSCORE', admittedKey, '-inf', at - staleMs, 'LIMIT', 0, 200)
for _, member in ipairs(old) do
  local tenant, execution = string.match(member, '^(.-)|(.*)$')
  local jobKey = jobPrefix .. 'turn-' .. string.gsub(execution, ':', '_')
  if redis.call('EXISTS', jobKey) == 0 or redis.call('HEXISTS', jobKey, 'finishedOn') == 1 then
    release(tenant, execution)
    released = released + 1
  else
    redis.call('ZADD', admittedKey, 'XX', at, member)
  end
end
local out = dispatch({ released })
return out
`;

/** A consumer's leaving: its registration is dropped (the auto window shrinks at the next tick). ARGV[4]: its name. */
export const LEAVE_SCRIPT = `${COMMON}
redis.call('HDEL', base .. ':workers', ARGV[4])
return 0
`;
