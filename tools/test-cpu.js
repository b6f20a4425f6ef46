// Where a Jest run's CPU went, per test file, the heaviest first: the lines test/support/cpu-environment.js
// appended (one per file run) when the run had COVEL_TEST_CPU set, e.g.
//   COVEL_TEST_CPU=/tmp/cpu.jsonl npm run jest -- <paths> --selectProjects unit --maxWorkers=1
//   node tools/test-cpu.js /tmp/cpu.jsonl [--top N]
// A file run more than once (A/B runs into one file) shows each run's total and their mean.
const { readFileSync } = require('node:fs');

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : Infinity;
if (args.length !== 1) {
  console.error('usage: node tools/test-cpu.js <COVEL_TEST_CPU file> [--top N]');
  process.exit(2);
}
const runs = new Map();
for (const line of readFileSync(args[0], 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const r = JSON.parse(line);
  const list = runs.get(r.file) ?? [];
  list.push(r);
  runs.set(r.file, list);
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const rows = [...runs].map(([file, list]) => {
  const totals = list.map((r) => r.user + r.system + r.childUser + r.childSystem);
  return {
    file,
    cpu: mean(totals),
    totals,
    jest: mean(list.map((r) => r.user + r.system)),
    children: mean(list.map((r) => r.childUser + r.childSystem)),
    wall: mean(list.map((r) => r.wall)),
  };
});
rows.sort((a, b) => b.cpu - a.cpu);
const f = (x) => x.toFixed(1).padStart(6);
console.log(`${'cpu s'.padStart(6)} ${'jest'.padStart(6)} ${'child'.padStart(6)} ${'wall s'.padStart(6)}  file (each run's cpu s)`);
for (const r of rows.slice(0, top))
  console.log(`${f(r.cpu)} ${f(r.jest)} ${f(r.children)} ${f(r.wall)}  ${r.file} (${r.totals.map((t) => t.toFixed(1)).join(', ')})`);
const sum = rows.reduce((a, r) => a + r.cpu, 0);
console.log(`${f(sum)} in ${rows.length} files`);
