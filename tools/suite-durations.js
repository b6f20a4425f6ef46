// Writes test/support/suite-durations.json (what the unit project's sequencer orders by, the slowest
// suite first) from the result file of a whole run:
//   npm run jest -- --selectProjects unit --maxWorkers=3 --json --outputFile=/tmp/unit-times.json
//   node tools/suite-durations.js /tmp/unit-times.json
const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const file = process.argv[2];
if (!file) {
  console.error('usage: node tools/suite-durations.js <jest --json output file>');
  process.exit(2);
}
const root = join(__dirname, '..');
const { testResults } = JSON.parse(readFileSync(file, 'utf8'));
const durations = Object.fromEntries(
  testResults.map((r) => [relative(root, r.name).split('\\').join('/'), Math.round((r.endTime - r.startTime) / 100) / 10]).sort(([a], [b]) => (a < b ? -1 : 1)),
);
const out = join(root, 'test', 'support', 'suite-durations.json');
writeFileSync(out, `${JSON.stringify(durations, null, 2)}\n`);
console.log(`${Object.keys(durations).length} suites → ${relative(root, out)}`);
