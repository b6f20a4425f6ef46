import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The environment variable names a source text reads: `process.env` or any `env` record (`env`,
 * `config.env`) followed by `.NAME`, `?.NAME` or `['NAME']`; in a compose file, `${NAME}` or
 * `${NAME:-…}`. An assignment to `process.env` is not a read. Names are upper case.
 */
export function envReads(text: string, kind: 'code' | 'compose' = 'code'): Set<string> {
  const names = new Set<string>();
  const notAssigned = String.raw`(?!\s*=[^=])`;
  const patterns =
    kind === 'compose'
      ? [/\$\{([A-Z][A-Z0-9_]*)(?=[:}?-])/g]
      : [
          new RegExp(String.raw`\benv\??\.([A-Z][A-Z0-9_]*)\b${notAssigned}`, 'g'),
          new RegExp(String.raw`\benv\[\s*['"\`]([A-Z][A-Z0-9_]*)['"\`]\s*\]${notAssigned}`, 'g'),
        ];
  for (const pattern of patterns) for (const m of text.matchAll(pattern)) names.add(m[1]);
  return names;
}

/** Tests are not scanned: their variables are listed, but a test may read what it likes. */
const SKIP_DIRS = new Set(['node_modules', '.git', '.covel', 'results', 'artifacts', 'dist', 'coverage', 'test']);

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) yield* files(join(dir, entry.name));
    } else if (/\.(ts|js|mjs)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) yield join(dir, entry.name);
  }
}

/** Variable → the files that read it, over the repository's code outside tests (apps, libs, plugins, tools, bench) and docker-compose.yml. */
export function envReadsInRepository(root: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const sources = [
    ...['apps', 'libs', 'plugins', 'tools', 'bench'].flatMap((d) => [...files(join(root, d))]).map((file) => ({ file, kind: 'code' as const })),
    { file: join(root, 'docker-compose.yml'), kind: 'compose' as const },
  ];
  for (const { file, kind } of sources) {
    for (const name of envReads(readFileSync(file, 'utf8'), kind)) found.set(name, [...(found.get(name) ?? []), relative(root, file)]);
  }
  return found;
}
