import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runMain } from '../apps/process-lifecycle';
import { runContextBench } from './context-bench';

/** `npm run bench`: prints a table per benchmark and writes bench/results/<name>.json. */
async function main() {
  const sizes = [100, 1_000, 10_000];
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 60);
  console.log(`buildContext with reads, narrator of 20 plugins, ${iterations} iterations per size (median)`);
  const rows = await runContextBench(sizes, iterations, (l) => console.log(l));
  console.table(
    rows.map((r) => ({
      'committed messages': r.messages,
      'uncompacted read': r.uncompactedRead,
      summaries: r.summaries,
      'read ms': r.medianReadMs.toFixed(3),
      'buildContext ms': r.medianBuildContextMs.toFixed(3),
      'read+assemble+body ms': r.medianTotalMs.toFixed(3),
    })),
  );
  const small = rows.find((r) => r.messages === 100)!;
  const large = rows.find((r) => r.messages === 10_000)!;
  const ratio = large.medianTotalMs / small.medianTotalMs;
  const verdict = ratio <= 1.5 ? 'ok' : 'OVER TARGET';
  console.log(`time at 10,000 / time at 100 = ${ratio.toFixed(2)} (target <= 1.5): ${verdict}`);
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'context.json');
  writeFileSync(file, JSON.stringify({ name: 'context', date: new Date().toISOString(), node: process.version, iterations, rows, ratio10kTo100: ratio, target: 1.5, verdict }, null, 2));
  console.log(`wrote ${file}`);
}

runMain(main);
