import type { UnzipFile } from 'fflate';
import { fflate } from './fflate';
import type { ArchiveEntry } from './archive-entries';
import { failure, type ImportWorldArchiveFailure } from './import-result';

/** Bytes of the zip given to the inflater at a time: one step inflates at most about 1032 times as much (deflate's largest ratio). */
const STEP_BYTES = 4096;

/**
 * The contents of the `wanted` entries (listed by `archiveEntries`), inflated a step at a time and
 * counted as they come: an entry that inflates past the size the central directory declares for
 * it (a zip bomb with lying headers) stops the reading at that step, one that falls short of it is
 * refused too. So the bytes inflated never pass the declared sizes, which `archiveEntries` held
 * to `maxUncompressedBytes`.
 */
export function inflateEntries(bytes: Uint8Array, wanted: readonly ArchiveEntry[]): { ok: true; files: Map<string, Uint8Array> } | ImportWorldArchiveFailure {
  const declared = new Map(wanted.map((e) => [e.name, e.size]));
  const parts = new Map<string, Uint8Array[]>();
  const done = new Set<string>();
  let problem: ImportWorldArchiveFailure | null = null;
  const refuse = (result: ImportWorldArchiveFailure, file?: UnzipFile) => {
    problem ??= result;
    file?.terminate();
  };

  const { Unzip, UnzipInflate } = fflate();
  const unzip = new Unzip((file) => {
    const size = declared.get(file.name);
    if (size === undefined || problem !== null) return;
    if (file.compression !== 0 && file.compression !== 8)
      return refuse(
        failure('BAD_ARCHIVE', [{ path: file.name, message: `compression method ${file.compression} is not supported (stored or deflated only)` }]),
      );
    const chunks: Uint8Array[] = [];
    parts.set(file.name, chunks);
    let got = 0;
    file.ondata = (error, data, final) => {
      if (problem !== null) return;
      if (error) return refuse(failure('BAD_ARCHIVE', [{ path: file.name, message: `cannot be inflated: ${error.message}` }]), file);
      got += data.length;
      if (got > size) return refuse(failure('BAD_ARCHIVE', [{ path: file.name, message: `inflates past the ${size} bytes its header declares` }]), file);
      chunks.push(data);
      if (!final) return;
      if (got < size) return refuse(failure('BAD_ARCHIVE', [{ path: file.name, message: `inflates to ${got} bytes, not the ${size} its header declares` }]));
      done.add(file.name);
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  try {
    for (let at = 0; at < bytes.length && problem === null; at += STEP_BYTES) unzip.push(bytes.subarray(at, at + STEP_BYTES), at + STEP_BYTES >= bytes.length);
  } catch (error) {
    refuse(failure('BAD_ARCHIVE', [{ path: '(archive)', message: `not a readable zip: ${error instanceof Error ? error.message : String(error)}` }]));
  }
  if (problem !== null) return problem;
  const missing = wanted.find((e) => !done.has(e.name));
  if (missing) return failure('BAD_ARCHIVE', [{ path: missing.name, message: 'ends before its data does (a truncated zip)' }]);
  return { ok: true, files: new Map([...parts].map(([name, chunks]) => [name, concat(chunks)])) };
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
