/**
 * The readable format of the embedded default: one line per entry,
 * `12:03:04.567 WARN  message  executionId=… attempt=2 err.code=…`, an error's stack frames on
 * the lines after it. Written in-process and synchronously (no worker-thread transport, nothing
 * lost when the process exits right after a line); it reads the JSON line pino wrote.
 */
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

export function prettyLine(jsonLine: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.endsWith('\n') ? jsonLine : `${jsonLine}\n`;
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const level = String(entry.level ?? '')
    .toUpperCase()
    .padEnd(5);
  const stacks: string[] = [];
  const fields = flatten(entry, '', stacks)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  const head = [time, level, String(entry.msg ?? '')].filter((part) => part !== '').join(' ');
  return `${head}${fields ? `  ${fields}` : ''}\n${stacks.map((s) => `${s}\n`).join('')}`;
}

/** The level a pretty line is read at: warnings and errors go to standard error. */
export function isWarningOrWorse(jsonLine: string): boolean {
  return /"level":"(?:warn|error|fatal)"/.test(jsonLine);
}

function flatten(value: Record<string, unknown>, prefix: string, stacks: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const [key, v] of Object.entries(value)) {
    if (prefix === '' && HIDDEN.has(key)) continue;
    const name = prefix ? `${prefix}.${key}` : key;
    if (key === 'stack' && typeof v === 'string') stacks.push(v);
    else if (v !== null && typeof v === 'object' && !Array.isArray(v)) out.push(...flatten(v as Record<string, unknown>, name, stacks));
    else out.push([name, typeof v === 'string' && /^[^\s"=]+$/u.test(v) ? v : JSON.stringify(v)]);
  }
  return out;
}
