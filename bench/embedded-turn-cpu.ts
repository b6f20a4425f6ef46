import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { PGlitePreparedStatements } from '../libs/events/pglite-prepared';
import pgliteTemplate from '../test/support/pglite-template';
import { startEmbedded } from '../test/support/embedded';

/**
 * CPU and PGlite statements per turn of the embedded engine (PGlite in process, in-process queue,
 * offline emulator), as the tests start it (test/support/embedded.ts, the unit project's template):
 *
 *   node -r ./tools/register.js bench/embedded-turn-cpu.ts [--narrator N] [--emberback N] [--every N] [--sql]
 *   node -r ./tools/register.js bench/embedded-turn-cpu.ts --harness N [--audits K] [--every N] [--sql]
 *
 * Per window of `--every` turns: CPU ms per turn of this process (process.cpuUsage: the engine, its
 * API, its worker and this client share it) and statements per turn (the dialect's statements, and
 * PGlite exec calls outside it). `--sql`: each window's statement texts with their count and the CPU
 * PGlite spent on them (its protocol calls: the wasm and the row parsing), the costliest first.
 * `--harness N`: N turns through the turn harness instead (default plugins, 8k window: what
 * compaction-300-turns plays), then `--audits K` audits spread over the session (CPU ms each).
 * Run it with `node --cpu-prof` and bench/cpu-profile-summary.ts for where the time goes.
 */
const { values } = parseArgs({
  options: {
    narrator: { type: 'string', default: '100' },
    emberback: { type: 'string', default: '10' },
    every: { type: 'string', default: '10' },
    sql: { type: 'boolean', default: false },
    /** The turn harness (libs/engine/turn/test/harness.ts) with the default plugins on an 8k window, as compaction-300-turns plays. */
    harness: { type: 'string', default: '0' },
    /** After the harness's turns: audits of this many turns (spread over the session), CPU ms each. */
    audits: { type: 'string', default: '0' },
  },
});

const counts = new Map<string, number>();
let statements = 0;
/** CPU ms inside PGlite (its protocol calls, wasm and result parsing) by statement text. */
const pgliteMs = new Map<string, number>();
let current = '(outside the dialect)';
const original = PGlitePreparedStatements.prototype.query;
PGlitePreparedStatements.prototype.query = async function (this: PGlitePreparedStatements, text: string, params: readonly unknown[]) {
  statements++;
  const key = text.replace(/\s+/g, ' ').slice(0, 160);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  current = key;
  try {
    return await (original.call(this, text, params) as Promise<never>);
  } finally {
    current = '(outside the dialect)';
  }
} as typeof original;
const proto = PGlite.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
for (const method of ['execProtocolRawSync']) {
  const inner = proto[method];
  proto[method] = function (this: unknown, ...args: unknown[]) {
    const start = process.cpuUsage();
    try {
      return inner.apply(this, args);
    } finally {
      const used = process.cpuUsage(start);
      pgliteMs.set(current, (pgliteMs.get(current) ?? 0) + (used.user + used.system) / 1000);
    }
  };
}
let execs = 0;
const exec = PGlite.prototype.exec;
PGlite.prototype.exec = function (this: PGlite, ...args: Parameters<PGlite['exec']>) {
  execs++;
  counts.set(`exec: ${String(args[0]).slice(0, 140)}`, (counts.get(`exec: ${String(args[0]).slice(0, 140)}`) ?? 0) + 1);
  return exec.apply(this, args);
};

function windowReport(label: string) {
  let cpu = process.cpuUsage();
  let s0 = statements;
  let e0 = execs;
  return (from: number, to: number) => {
    const n = to - from + 1;
    const used = process.cpuUsage(cpu);
    console.log(
      `${label} turns ${from}-${to}: ${((used.user + used.system) / 1000 / n).toFixed(1)} CPU ms/turn, ${((statements - s0) / n).toFixed(1)} statements/turn, ${((execs - e0) / n).toFixed(1)} exec/turn`,
    );
    if (values.sql) {
      const top = [...counts].sort((a, b) => (pgliteMs.get(b[0]) ?? 0) - (pgliteMs.get(a[0]) ?? 0)).slice(0, 40);
      for (const [text, k] of top) console.log(`  ${k}\t${((pgliteMs.get(text) ?? 0) / n).toFixed(2)} ms/turn\t${text}`);
      console.log(`  total in PGlite's protocol calls: ${([...pgliteMs.values()].reduce((a, b) => a + b, 0) / n).toFixed(1)} ms/turn`);
    }
    counts.clear();
    pgliteMs.clear();
    cpu = process.cpuUsage();
    s0 = statements;
    e0 = execs;
  };
}

async function harnessTurns(turns: number, every: number) {
  const { turnHarness, eventually } = await import('../libs/engine/turn/test/harness');
  const { TurnRunner } = await import('../libs/engine/turn/turn-runner');
  const { endpointFor, parseLlmConfig, ProviderRegistry } = await import('../libs/providers');
  const { SMALL_WINDOW_LLM } = await import('../test/support/small-window-llm');
  const { join } = await import('node:path');
  const h = await turnHarness({
    pluginsDir: join(__dirname, '..', 'plugins'),
    pluginFilter: (p) => p.manifest.enabledByDefault,
    handlers: (deps) => new TurnRunner(deps),
  });
  h.deps.providers = new ProviderRegistry(parseLlmConfig(SMALL_WINDOW_LLM), (protocol) => endpointFor(protocol, {}, h.emulator.url));
  try {
    const session = await h.session();
    let report = windowReport('harness');
    for (let i = 1; i <= turns; i++) {
      const text = `Turn ${i}: I search the flooded archive shelf by shelf and read the spines aloud. `.repeat(1 + ((i - 1) % 4));
      const job = await h.input(session, text);
      await h.queue.enqueue(job);
      const status = async () => (await h.deps.readModels.execution(job.tenantId, job.executionId))?.status ?? '';
      await eventually(async () => ['committed', 'failed'].includes(await status()), 'ended');
      if ((await status()) !== 'committed') throw new Error(`turn ${i} failed`);
      if (i % every === 0 || i === turns) {
        report(i - ((i - 1) % every), i);
        report = windowReport('harness');
      }
    }
    const audits = Number(values.audits);
    if (audits > 0) {
      const { auditTurn } = await import('../libs/engine/audit/turn-audit');
      const { historyReadLimit } = await import('../libs/engine/execution/deps');
      const events = await h.events(session.sessionId);
      const turnIds = events.filter((e) => e.type === 'player-input.submitted@1').map((e) => (e.data as { turnId: string }).turnId);
      console.log(`${events.length} events in the session`);
      const cpu = process.cpuUsage();
      const s0 = statements;
      for (let k = 0; k < audits; k++) {
        const turnId = turnIds[Math.floor((k * (turnIds.length - 1)) / Math.max(1, audits - 1))];
        const audit = await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, turnId);
        if (!audit.identical) throw new Error(`turn ${turnId} not identical`);
      }
      const used = process.cpuUsage(cpu);
      console.log(
        `audits: ${((used.user + used.system) / 1000 / audits).toFixed(1)} CPU ms/audit, ${((statements - s0) / audits).toFixed(1)} statements/audit`,
      );
    }
  } finally {
    await h.close();
  }
}

async function main() {
  await pgliteTemplate();
  if (Number(values.harness) > 0) return harnessTurns(Number(values.harness), Number(values.every));
  const covel = await startEmbedded({}, undefined, { onDisk: false });
  const every = Number(values.every);
  try {
    for (const [label, body, turns] of [
      ['narrator', {}, Number(values.narrator)],
      ['emberback', { worldId: 'emberback' }, Number(values.emberback)],
    ] as const) {
      if (turns === 0) continue;
      const client = await covel.newTenant(label);
      const { id } = await client.createSession(body);
      let report = windowReport(label);
      for (let t = 1; t <= turns; t++) {
        const { executionId } = await client.submit(id, `Turn ${t}: I search the flooded archive shelf by shelf and read the spines aloud.`);
        await client.waitFor(executionId, 60_000);
        if (t % every === 0 || t === turns) {
          report(t - ((t - 1) % every), t);
          report = windowReport(label);
        }
      }
    }
  } finally {
    await covel.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
