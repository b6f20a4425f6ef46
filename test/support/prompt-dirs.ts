import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A temporary folder per test for prompt templates (made before each test, removed after it; call
 * at the top of a test file). `dirWith(name, suffixes)` makes a folder in it holding
 * `<template>.<suffix>.md` files whose text is their suffix (`default`: `<template>.md`).
 */
export function promptDirs(): { base: () => string; dirWith: (name: string, suffixes: string[], template?: string) => string } {
  let base = '';
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'covel-prompts-'));
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));
  return {
    base: () => base,
    dirWith(name, suffixes, template = 'x') {
      const dir = join(base, name);
      mkdirSync(dir, { recursive: true });
      for (const suffix of suffixes) writeFileSync(join(dir, suffix === 'default' ? `${template}.md` : `${template}.${suffix}.md`), suffix);
      return dir;
    },
  };
}
