// The transform cache of tools/register.js: each TypeScript file's output as @swc-node/register's
// compile() gave it (the code with its inline source map, and the map), in one file named by a
// SHA-256 of the source, its path, the compiler options, the versions of @swc-node/register and
// @swc/core and the variables that change the output. A start that finds every file here loads
// neither SWC nor @swc-node/register (about 0.3 s of CPU a process) and parses no JSON.
//
// Entries are written to a temporary file and renamed into place (processes share the directory),
// and each holds a SHA-256 of its content, checked at every read: a partial or damaged entry is
// never used, its file is compiled again. The directory is made on demand; one that cannot be
// written only means compiling every time.
const { createHash } = require('crypto');
const { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } = require('fs');
const { join } = require('path');

const FORMAT = 'covel-register-cache 1';

/** `SWC_NODE_CACHE_DIR` when set (the image warms its own), else node_modules/.cache/covel-register of the repository. */
function cacheDirectory(root) {
  return process.env.SWC_NODE_CACHE_DIR || join(root, 'node_modules', '.cache', 'covel-register');
}

/** What every key of a process starts with: anything that changes the output of compile() besides the file. */
function cacheSalt(compileOptions, sourceMapMode) {
  // both packages' entry points are in their root directories; their exports hide package.json
  const version = (name) => {
    const json = JSON.parse(readFileSync(join(require.resolve(name), '..', 'package.json'), 'utf8'));
    if (json.name !== name) throw new Error(`tools/register-cache.js: found no package.json of ${name}`);
    return json.version;
  };
  return JSON.stringify([
    FORMAT,
    compileOptions,
    `@swc-node/register ${version('@swc-node/register')}`,
    `@swc/core ${version('@swc/core')}`,
    sourceMapMode,
    process.env.SWC_NODE_IGNORE_DYNAMIC ? 'ignoreDynamic' : '',
  ]);
}

/** A cache in `directory` for keys salted with `salt`: `get` gives an entry or undefined, `set` stores one (failures ignored). */
function transformCache(directory, salt) {
  let written = 0;
  const path = (filename, source) => {
    const key = createHash('sha256').update(salt).update('\0').update(filename).update('\0').update(source).digest('hex');
    return join(directory, key.slice(0, 2), key);
  };
  return {
    /** @returns {{ code: string, map: string | undefined } | undefined} */
    get(filename, source) {
      let text;
      try {
        text = readFileSync(path(filename, source), 'utf8');
      } catch {
        return undefined;
      }
      // <sha256 of the rest>\n<code length>\n<code><map>
      const first = text.indexOf('\n');
      const second = text.indexOf('\n', first + 1);
      if (first !== 64 || second < 0) return undefined;
      const body = text.slice(first + 1);
      if (createHash('sha256').update(body).digest('hex') !== text.slice(0, first)) return undefined;
      const length = Number(text.slice(first + 1, second));
      if (!Number.isSafeInteger(length) || second + 1 + length > text.length) return undefined;
      const map = text.slice(second + 1 + length);
      return { code: text.slice(second + 1, second + 1 + length), map: map === '' ? undefined : map };
    },
    set(filename, source, code, map) {
      const target = path(filename, source);
      const body = `${code.length}\n${code}${map ?? ''}`;
      const temp = `${target}.${process.pid}.${written++}.tmp`;
      try {
        mkdirSync(join(target, '..'), { recursive: true });
        writeFileSync(temp, `${createHash('sha256').update(body).digest('hex')}\n${body}`);
        renameSync(temp, target);
      } catch {
        try {
          rmSync(temp, { force: true });
        } catch {
          // nothing to clean
        }
      }
    },
  };
}

module.exports = { cacheDirectory, cacheSalt, transformCache };
