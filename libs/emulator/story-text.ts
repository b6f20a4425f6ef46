import { createHash } from 'node:crypto';
import { truncateText } from '../text';

const OPENINGS = [
  'The embers along the ridge flare as',
  'A hush falls over the camp while',
  'Somewhere below the ash-line, a bell rings as',
  'The wind turns warm and smells of cinders as',
  'Lantern light trembles on the basalt walls as',
  'The old dragon-road creaks underfoot as',
];
const MIDDLES = [
  'Mira the ferrywoman watches from the shadows, weighing what she has heard.',
  'A scout of the Ember Wardens marks the moment in a soot-black ledger.',
  'The great back of Emberback shifts beneath the village, slow as a sleeping tide.',
  'Far off, a caravan of salt-traders stops to listen.',
  'Sparks drift upward and vanish among the first stars.',
  'Someone has left a warm stone on the path, carved with a single rune.',
];
const ENDINGS = [
  'What do you do next?',
  'The path ahead forks: uphill toward the vents, or down to the river.',
  'For a moment, nothing moves at all.',
  'A voice calls your name from the far side of the square.',
];

/** Deterministic, story-shaped text chosen from a hash of the request's messages. */
export function emulatedStoryText(messages: readonly { role: string; content?: unknown }[]): string {
  const digest = createHash('sha256').update(JSON.stringify(messages)).digest();
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const said = truncateText(oneLine(textOf(lastUser?.content)), 120);
  const action = said ? `you ${lowerFirst(said.replace(/[.!?]+$/, ''))}.` : 'you wait.';
  return [
    `${OPENINGS[digest[0] % OPENINGS.length]} ${action}`,
    MIDDLES[digest[1] % MIDDLES.length],
    MIDDLES[(digest[1] + 1 + (digest[2] % (MIDDLES.length - 1))) % MIDDLES.length],
    ENDINGS[digest[3] % ENDINGS.length],
  ].join(' ');
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === 'object' && part && 'text' in part ? String((part as { text: unknown }).text) : '')).join(' ');
  }
  return '';
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function lowerFirst(s: string): string {
  const [first = ''] = s; // the first code point, not the first UTF-16 unit
  return first.toLowerCase() + s.slice(first.length);
}
