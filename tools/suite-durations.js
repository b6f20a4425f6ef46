// Writes test/support/suite-durations.json (what the sequencer orders by, the slowest suite first, on a
// machine where Jest has no timings of its own: a fresh clone, CI) from the result files of whole runs,
// one per project; suites not in the files keep their entry while their file exists:
//   npm run jest -- --selectProjects unit --maxWorkers=3 --json --outputFile=/tmp/unit-times.json
//   npm run jest -- --selectProjects integration --maxWorkers=2 --json --outputFile=/tmp/integration-times.json
//   node tools/suite-durations.js [--root <the checkout the runs ran in>] /tmp/unit-times.json /tmp/integration-times.json
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const args = process.argv.slice(2);
const rootAt = args.indexOf('--root');
const runRoot = rootAt >= 0 ? args.splice(rootAt, 2)[1] : join(__dirname, '..');
if (args.length === 0 || !runRoot) {
  console.error('usage: node tools/suite-durations.js [--root <dir>] <jest --json output file>...');
  process.exit(2);
}
const root = join(__dirname, '..');
const out = join(root, 'test', 'support', 'suite-durations.json');
const durations = existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : {};
for (const file of args) {
  for (const r of JSON.parse(readFileSync(file, 'utf8')).testResults) {
    durations[relative(runRoot, r.name).split('\\').join('/')] = Math.round((r.endTime - r.startTime) / 100) / 10;
  }
}
const kept = Object.entries(durations)
  .filter(([suite]) => existsSync(join(root, suite)))
  .sort(([a], [b]) => (a < b ? -1 : 1));
writeFileSync(out, `${JSON.stringify(Object.fromEntries(kept), null, 2)}\n`);
console.log(`${kept.length} suites → ${relative(root, out)}`);
