import { styleText } from 'node:util';

/** What a printed line is, which decides its colour. The story itself keeps the terminal's own colour. */
export type LineRole = 'story' | 'player' | 'status' | 'bookkeeper' | 'notice' | 'error';

export type Paint = (role: LineRole, text: string) => string;

const STYLES: Record<Exclude<LineRole, 'story'>, Parameters<typeof styleText>[0]> = {
  player: ['bold', 'cyan'],
  status: ['dim', 'italic'],
  bookkeeper: 'dim',
  notice: 'yellow',
  error: 'red',
};

/** Colour only on a terminal, and never when NO_COLOR is set to anything (https://no-color.org). */
export function colorWanted(output: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return output.isTTY === true && !env.NO_COLOR;
}

/** Colours by role (`node:util` styleText, its own stream check off: `colorWanted` decided), or plain text when off. */
export function painter(color: boolean): Paint {
  if (!color) return (_role, text) => text;
  return (role, text) => (role === 'story' || text === '' ? text : styleText(STYLES[role], text, { validateStream: false }));
}
