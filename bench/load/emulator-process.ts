import { ProviderEmulator } from '../../libs/emulator';
import { runMain } from '../../apps/process-lifecycle';

/**
 * The provider emulator as its own process, shared by the bench's workers through
 * COVEL_EMULATOR_URL: `COVEL_EMULATOR_DELAY_MS` before each answer. Prints its URL when ready.
 */
async function main() {
  const delay = Number(process.env.COVEL_EMULATOR_DELAY_MS ?? 0);
  if (!Number.isInteger(delay) || delay < 0)
    throw new Error(`COVEL_EMULATOR_DELAY_MS: a whole number of milliseconds, not ${process.env.COVEL_EMULATOR_DELAY_MS}`);
  const emulator = await new ProviderEmulator({ responseDelayMs: delay }).start();
  // it records every request for tests; a bench only needs the answers
  const forget = setInterval(() => emulator.requests.splice(0), 1_000);
  const stop = () => {
    clearInterval(forget);
    void emulator.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  console.log(`emulator listening on ${emulator.url} (delay ${delay} ms)`);
}

runMain(main);
