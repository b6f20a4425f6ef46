import { join } from 'node:path';
import { cycleReports, forbiddenImports, formatReports, importGraph } from './graph';

/** `npm run cycles`: the import loops of libs/ (files, libraries, rooms of libs/engine) and the forbidden imports; exits 1 if there is one. */
const root = join(__dirname, '..', '..');
const graph = importGraph({ root, dirs: ['libs'] });
const reports = cycleReports(graph);
const forbidden = forbiddenImports(graph);
console.log(formatReports(reports));
console.log(forbidden.length === 0 ? 'forbidden imports: none' : `forbidden imports:\n${forbidden.map((f) => `  ${f}`).join('\n')}`);
if (reports.some((r) => r.tangles.length > 0) || forbidden.length > 0) process.exit(1);
