/** What the player typed: story input, a command, or nothing. */
export type PlayerLine =
  { kind: 'empty' } | { kind: 'input'; text: string } | { kind: 'command'; name: CommandName; arg: string } | { kind: 'unknown'; name: string };

export const COMMANDS = [
  'help',
  'new',
  'session',
  'locale',
  'worlds',
  'world',
  'import',
  'retry',
  'alternatives',
  'select',
  'undo',
  'edit',
  'edit!',
  'branch',
  'quit',
] as const;
export type CommandName = (typeof COMMANDS)[number];

export const HELP_TEXT = [
  'Type what you do, and press Enter: the story is written as you watch.',
  'Commands (never sent to the story):',
  '  /help               this help',
  '  /new                start a new session (same world)',
  '  /session <id>       continue another session of yours',
  '  /locale <tag>       start a new session in another language (e.g. /locale zh-CN)',
  '  /worlds             list the worlds you can play (/worlds next: the next page)',
  '  /world <id>         start a new session in that world (built-in or yours)',
  '  /import <file>      import a card (PNG or JSON) or a world folder (.zip), and play it',
  '  /retry              write the last turn again (a new alternative)',
  '  /alternatives       list the alternatives of the last turn',
  '  /select <n>         put alternative n of the last turn in the story (/select: list them)',
  '  /undo               take the last turn out of the story (/undo <turn id>: that turn and every later one)',
  '  /edit <text>        change your last input (the story stays as written; /edit: show it)',
  '  /edit! <text>       change your last input and write the turn again (also /edit --regenerate <text>)',
  '  /branch             a new session with the story so far, to play from here (this one is kept)',
  '  /quit               leave (also Ctrl-D)',
  'Ctrl-C while the story is being written stops that turn (nothing of it is kept).',
].join('\n');

/** A line starting with `/` is always a command: an unknown one is answered with the help, never sent as story input. */
export function parseLine(line: string): PlayerLine {
  const text = line.trim();
  if (!text) return { kind: 'empty' };
  if (!text.startsWith('/')) return { kind: 'input', text };
  const head = text.slice(1).split(/\s/, 1)[0];
  const name = head.toLowerCase();
  const command = COMMANDS.find((c) => c === name) ?? (name === 'exit' ? 'quit' : name === '?' ? 'help' : undefined);
  if (!command) return { kind: 'unknown', name: `/${head}` };
  // the rest as typed (a file name keeps its spaces)
  return { kind: 'command', name: command, arg: text.slice(1 + head.length).trim() };
}
