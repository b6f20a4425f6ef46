import { createHash } from 'node:crypto';
import IORedis from 'ioredis';
import { ADMIT_SCRIPT, LEAVE_SCRIPT, RELEASE_SCRIPT, TICK_SCRIPT } from '../../libs/engine/queue/fair';
import { leanMoveToActive } from '../../libs/engine/queue/fetch';
import { admitAddScript } from '../../libs/engine/queue/admit-add';

/** One top-level command a client sent (a script is one: the commands it runs inside are not counted). */
export interface MonitoredCommand {
  /** The command, a script call named by its script (`evalsha moveToActive`, `evalsha covelFairAdmit`). */
  name: string;
  args: string[];
  /** The client that sent it (address:port). */
  source: string;
  /** What it is for, from the keys it names: `queue` (BullMQ, fair admission), `deltas`, `rate`, `provider-health`, `other`. */
  area: string;
}

/** The area of a command from the keys it names (`<prefix>:covel-turns:…`, `<prefix>:fair:…`, `<prefix>:deltas:…`). */
function areaOf(args: readonly string[]): string | null {
  const text = args.join(' ');
  if (/:covel-(turns|runtimes|worlds)\b|:fair\b/.test(text)) return 'queue';
  if (text.includes(':deltas:')) return 'deltas';
  if (text.includes(':rate:')) return 'rate';
  if (text.includes(':provider-health:')) return 'provider-health';
  return null;
}

const sha1 = (text: string | Buffer) => createHash('sha1').update(text).digest('hex');

const ESCAPED: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', '"': '"', '\\': '\\' };

/** An argument's bytes as the client sent them: MONITOR prints each one escaped (`\n`, `\"`, `\\`, a byte outside ASCII as `\xHH`). */
function unescaped(text: string): Buffer {
  const latin1 = text.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (whole, code: string) =>
    code.length === 3 ? String.fromCharCode(parseInt(code.slice(1), 16)) : (ESCAPED[code] ?? whole),
  );
  return Buffer.from(latin1, 'latin1');
}

/** sha1 → script name: BullMQ's scripts (as ioredis defines them) and the fair admission scripts. */
function scriptNames(): Map<string, string> {
  // BullMQ's script table (name, key count, Lua text), as its connection defines them
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const scripts = require('bullmq/dist/cjs/scripts') as Record<string, { name: string; content: string }>;
  const names = new Map(Object.values(scripts).map((s) => [sha1(s.content), s.name]));
  const fair = { covelFairAdmit: ADMIT_SCRIPT, covelFairRelease: RELEASE_SCRIPT, covelFairTick: TICK_SCRIPT, covelFairLeave: LEAVE_SCRIPT };
  for (const [name, lua] of Object.entries(fair)) names.set(sha1(lua), name);
  const lean = leanMoveToActive();
  if (lean) names.set(sha1(lean.content), lean.name);
  const admitAdd = admitAddScript();
  if (admitAdd) names.set(sha1(admitAdd.lua), 'covelFairAdmitAdd');
  return names;
}

/**
 * A MONITOR connection to `client`'s server. ioredis's own `monitor()` leaves a connection whose
 * start failed ("Command queue state error": another client's command echoed before MONITOR's own
 * answer, on a busy Redis) open, with no error listener: its next error was unhandled and failed
 * the suite. This one listens for errors from the start (later ones are ignored: what it saw is
 * what the caller counts), closes a failed attempt and tries again.
 */
export async function openMonitor(client: IORedis, attempts = 5): Promise<IORedis> {
  for (let attempt = 1; ; attempt++) {
    const monitor = client.duplicate({ monitor: true, lazyConnect: true });
    try {
      await new Promise<void>((resolve, reject) => {
        monitor.on('error', reject); // kept: once started, a settled promise ignores it
        monitor.once('monitoring', () => resolve());
        monitor.connect().catch(reject);
      });
      return monitor;
    } catch (error) {
      monitor.disconnect();
      if (attempt >= attempts) throw error;
    }
  }
}

/**
 * MONITOR on a Redis (a private one: every client's commands are seen): the top-level commands
 * sent while it listens, lines run from inside a script (source `lua`) left out.
 */
export class RedisMonitor {
  readonly commands: MonitoredCommand[] = [];
  private readonly names = scriptNames();

  private constructor(private readonly redis: IORedis) {}

  static async start(redisUrl: string): Promise<RedisMonitor> {
    const redis = new IORedis(redisUrl);
    const monitor = await openMonitor(redis);
    const self = new RedisMonitor(redis);
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') return;
      self.commands.push({ ...self.named(args), source, area: areaOf(args.slice(1)) ?? '' });
    });
    self.stopMonitor = () => monitor.disconnect();
    return self;
  }

  private stopMonitor: () => void = () => undefined;

  private named(args: string[]): { name: string; args: string[] } {
    const command = (args[0] ?? '').toLowerCase();
    if (command === 'evalsha' || command === 'eval') {
      const script = command === 'evalsha' ? this.names.get(args[1]) : this.names.get(sha1(unescaped(args[1] ?? '')));
      return { name: `${command} ${script ?? args[1]?.slice(0, 12)}`, args: args.slice(2) };
    }
    return { name: command, args: args.slice(1) };
  }

  /** Resolves once `check` holds for the commands seen (polling; a hang guard, not a speed bound). */
  async until(check: (commands: readonly MonitoredCommand[]) => boolean, timeoutMs = 20_000): Promise<void> {
    for (const deadline = Date.now() + timeoutMs; !check(this.commands); await new Promise((r) => setTimeout(r, 10)))
      if (Date.now() > deadline) throw new Error(`the commands awaited were not seen within ${timeoutMs} ms`);
  }

  private marks = 0;

  /**
   * Resolves once every command the server ran before this call has been seen: an `ECHO` of a
   * unique mark sent now (on the client the monitor was opened from), awaited on the monitor's
   * feed, which follows the server's order. A fixed sleep was not enough on a loaded machine
   * (MONITOR's lines came in later than 200 ms and a count read short).
   */
  async flushed(timeoutMs = 20_000): Promise<void> {
    const mark = `covel-monitor-mark-${process.pid}-${++this.marks}`;
    await this.redis.echo(mark);
    await this.until((commands) => commands.some((c) => c.name === 'echo' && c.args[0] === mark), timeoutMs);
  }

  /**
   * The commands seen; a command without keys (MULTI, EXEC, PING) in the area
   * of the nearest command with keys its client sent (the transaction it opens or closes), else `other`.
   */
  seen(): MonitoredCommand[] {
    const out = this.commands.map((c) => ({ ...c }));
    out.forEach((c, i) => {
      if (c.area) return;
      const sameClient = (d: MonitoredCommand) => d.source === c.source && d.area !== '';
      const next = out.slice(i + 1).find(sameClient);
      const previous = out.slice(0, i).reverse().find(sameClient);
      c.area = (c.name === 'exec' ? previous?.area : next?.area) ?? previous?.area ?? 'other';
    });
    return out;
  }

  /** The commands seen, counted by name (most first). */
  static byName(commands: readonly MonitoredCommand[]): [string, number][] {
    const counts = new Map<string, number>();
    for (const c of commands) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  }

  stop(): void {
    this.stopMonitor();
    this.redis.disconnect();
  }
}
