import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * A file shipped inside an installed npm package, for the API to serve as it is (the inspector's and
 * the API docs' browser libraries).
 *
 * Found where Node looks for the package (the `node_modules` directories from this file up, Node's own
 * `require.resolve.paths`), never through `require.resolve('<pkg>/package.json')`: a package's
 * `exports` map decides which subpaths may be required, and one that does not export
 * `./package.json` (htm 3.1.1) makes that call throw `ERR_PACKAGE_PATH_NOT_EXPORTED` under Node,
 * while Jest's resolver, which ignores the restriction, lets a test pass. The file is read from the
 * package's directory, so the `exports` map has no say in it. Throws, naming the package and the file,
 * when either is missing.
 */
export function packageFile(pkg: string, file: string): string {
  const dir = packageDirectory(pkg);
  const path = join(dir, file);
  if (!existsSync(path)) throw new Error(`package ${pkg} (${dir}) has no file ${file}`);
  return path;
}

const directories = new Map<string, string>();

/** The directory of the installed package `pkg` (cached: installed packages do not move while the process runs). */
export function packageDirectory(pkg: string): string {
  const known = directories.get(pkg);
  if (known) return known;
  const paths = createRequire(__filename).resolve.paths(pkg) ?? [];
  const dir = paths.map((p) => join(p, pkg)).find((d) => existsSync(join(d, 'package.json')));
  if (!dir) throw new Error(`package ${pkg} is not installed (looked in ${paths.join(', ')})`);
  directories.set(pkg, dir);
  return dir;
}
