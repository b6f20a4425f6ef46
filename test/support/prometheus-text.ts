/** One sample of the Prometheus text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** `# TYPE` of each family. */
  types: Map<string, string>;
  samples: Sample[];
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

const unescape = (v: string) => v.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));

/** A small parser of the text format (0.0.4): enough for tests to read what `GET /metrics` says. */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      types.set(name, type);
      continue;
    }
    if (line.startsWith('#') || line.trim() === '') continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      let l: RegExpExecArray | null;
      while ((l = LABEL.exec(m[2])) !== null) labels[l[1]] = unescape(l[2]);
      if (LABEL.lastIndex !== m[2].length && m[2].length > 0 && LABEL.lastIndex !== 0) throw new Error(`bad labels: ${line}`);
    }
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    samples.push({ name: m[1], labels, value });
  }
  return { types, samples };
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(e: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return e.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The sum of the values of those samples (0 when there are none). */
export const total = (e: Exposition, name: string, labels: Record<string, string> = {}) => samplesOf(e, name, labels).reduce((n, s) => n + s.value, 0);
