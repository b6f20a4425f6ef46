/**
 * Polls until `condition` holds, every `stepMs`; throws `not <what> after <timeoutMs> ms` past the
 * deadline. A hang guard for tests that wait for something asynchronous, not a speed bound.
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000, stepMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not ${what} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
