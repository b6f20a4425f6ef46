/**
 * fflate, required at first use rather than at the top: only a world archive's export or import
 * needs it, and every process and test file that loads the engine would evaluate it (its inflate
 * tables are built as it loads).
 */
export function fflate(): typeof import('fflate') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('fflate') as typeof import('fflate');
}
