/**
 * How strong a configured API key is (`COVEL_BOOTSTRAP_API_KEY`): an estimate, not a proof.
 *
 * - printable ASCII without spaces (it travels in an Authorization header);
 * - at least 32 characters;
 * - at least 128 bits by length × log2(size of the character classes used: lowercase 26,
 *   uppercase 26, digits 10, symbols 32), so 32 hex characters (165) pass and 32 digits (106) do not;
 * - real variety: at least 2.5 bits per character of Shannon entropy over its own characters (a
 *   random 32-character hex key has about 3.6), so one repeated character or a mostly-constant
 *   key fails; and not a shorter string repeated.
 */
export const MIN_API_KEY_LENGTH = 32;
export const MIN_API_KEY_BITS = 128;
const MIN_BITS_PER_CHARACTER = 2.5;

const CLASSES = [
  { name: 'lowercase letters', size: 26, pattern: /[a-z]/ },
  { name: 'uppercase letters', size: 26, pattern: /[A-Z]/ },
  { name: 'digits', size: 10, pattern: /[0-9]/ },
  { name: 'symbols', size: 32, pattern: /[!-/:-@[-`{-~]/ },
];

/** length × log2(size of the character classes the key uses). */
export function estimatedKeyBits(key: string): number {
  const pool = CLASSES.filter((c) => c.pattern.test(key)).reduce((sum, c) => sum + c.size, 0);
  return pool === 0 ? 0 : [...key].length * Math.log2(pool);
}

/** Why the key is too weak to accept, or null when it is strong enough. */
export function apiKeyWeakness(key: string): string | null {
  const chars = [...key];
  if (!/^[!-~]*$/.test(key)) return 'must be printable ASCII without spaces (it is sent in an Authorization header)';
  const advice = 'generate one with `openssl rand -hex 32`';
  if (chars.length < MIN_API_KEY_LENGTH) return `must be at least ${MIN_API_KEY_LENGTH} characters, not ${chars.length}: ${advice}`;
  const bits = estimatedKeyBits(key);
  if (bits < MIN_API_KEY_BITS) {
    const used = CLASSES.filter((c) => c.pattern.test(key)).map((c) => c.name);
    return `is too guessable: about ${Math.floor(bits)} bits (${chars.length} characters of ${used.join(', ')}), at least ${MIN_API_KEY_BITS} needed: use a longer key or more kinds of characters, or ${advice}`;
  }
  if (shannonBitsPerCharacter(chars) < MIN_BITS_PER_CHARACTER || isRepetition(chars)) {
    return `has too little variety (repeated characters or a repeated pattern): ${advice}`;
  }
  return null;
}

function shannonBitsPerCharacter(chars: string[]): number {
  const counts = new Map<string, number>();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / chars.length) * Math.log2(n / chars.length);
  return bits;
}

/** True when the key is a shorter string repeated (the last repeat may be cut short). */
function isRepetition(chars: string[]): boolean {
  for (let period = 1; period <= chars.length / 2; period++) {
    if (chars.every((c, i) => i < period || c === chars[i - period])) return true;
  }
  return false;
}
