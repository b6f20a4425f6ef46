import { createHmac, timingSafeEqual } from 'node:crypto';
import { truncateText } from '../text';

/**
 * The emulator's reasoning: deterministic text and signatures it can verify. Signatures are an
 * HMAC under a fixed key, so any emulator instance accepts what another produced (a resumed run
 * against a restarted emulator), and a changed or stripped one is caught as the providers catch it.
 */
const KEY = 'covel-emulator-reasoning';

export function signReasoning(kind: string, payload: string): string {
  return createHmac('sha256', KEY).update(`${kind}\n${payload}`).digest('base64');
}

export function verifyReasoning(kind: string, payload: string, signature: unknown): boolean {
  if (typeof signature !== 'string' || signature === '') return false;
  const expected = Buffer.from(signReasoning(kind, payload));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** What the emulated model "thinks" before answering: about the last user text and the tool rounds so far. */
export function emulatedReasoning(transcript: readonly { role: string; content: string }[], toolResults: number): string {
  const lastUser =
    [...transcript]
      .reverse()
      .find((m) => m.role === 'user' && m.content.trim() !== '')
      ?.content.trim() ?? '';
  return `The player said "${truncateText(lastUser, 60)}". Tool results so far: ${toolResults}.`;
}
