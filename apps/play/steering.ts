import { ApiError, type PlayClient, type StoryMessage, type TurnAlternative } from './play-client';
import type { LineRole } from './style';
import { truncateToWidth } from './wrap';

/** What the steering commands need of the terminal: its client, where it prints, the turn it follows. */
export interface SteeringHost {
  readonly client: PlayClient;
  /** Columns to wrap at. */
  readonly width: number;
  requireSession(): string;
  /** The latest player turn of the story (what /retry, /select, /undo and /branch name); null: none yet. */
  latestTurn(): string | null;
  setLatestTurn(turnId: string | null): void;
  say(text: string, role?: LineRole): void;
  /** Prints the story text of these messages, word-wrapped. */
  printMessages(messages: readonly StoryMessage[]): void;
  /** Starts a turn and prints it as it is written, until it is committed or has failed. */
  play(start: () => Promise<{ executionId: string; turnId: string }>): Promise<void>;
  /** Continues another session (and follows its events). */
  open(sessionId: string): Promise<void>;
}

const TURN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The engine has no such route (an older server): a 404 with no engine error code, Nest's own. */
export const missingRoute = (error: unknown): boolean => error instanceof ApiError && error.status === 404 && error.code === null;

/** Runs `request`; on an engine without its route, says which command needs a newer server (and answers null). */
async function newerServer<T>(host: SteeringHost, command: string, request: () => Promise<T>): Promise<T | null> {
  try {
    return await request();
  } catch (error) {
    if (!missingRoute(error)) throw error;
    host.say(`! This engine does not have ${command} yet (no such route): it needs a newer server.`, 'error');
    return null;
  }
}

/** The latest player input of the story, and its turn. */
const lastInput = (messages: readonly StoryMessage[]) => [...messages].reverse().find((m) => m.sourceType === 'player');

/** `/alternatives` (and `/select` alone): the latest turn's alternatives, the one in the story starred. */
export async function showAlternatives(host: SteeringHost): Promise<void> {
  const turnId = host.latestTurn();
  if (!turnId) return host.say('No turn yet: play a turn first.');
  const answer = await newerServer(host, '/alternatives', () => host.client.alternatives(host.requireSession(), turnId));
  if (!answer) return;
  const list = answer.alternatives;
  if (list.length === 0) return host.say('This turn has no alternatives.');
  const lines = list.map((alt, i) => {
    const text = alt.status === 'committed' ? alt.preview : `(${alt.status})`;
    const preview = truncateToWidth(text.replace(/\s+/g, ' ').trim(), Math.max(10, host.width - 12));
    return `${alt.selected ? '*' : ' '} ${i + 1}. ${preview}`;
  });
  host.say(`Alternatives of the last turn (* = the one in the story):\n${lines.join('\n')}`, 'story');
  if (list.length > 1) host.say('/select <n> puts one in the story; /retry writes another.');
}

/** `/select <n>`: alternative n (1-based, as listed) of the latest turn goes in the story; its story text is shown. */
export async function selectAlternative(host: SteeringHost, arg: string): Promise<void> {
  if (!arg) return showAlternatives(host);
  const turnId = host.latestTurn();
  if (!turnId) return host.say('No turn yet: play a turn first.');
  if (!/^\d+$/.test(arg)) return host.say('/select <n>: the number of an alternative as /select lists them, e.g. /select 1');
  const n = Number(arg);
  const sessionId = host.requireSession();
  const { alternatives } = await host.client.alternatives(sessionId, turnId);
  const chosen: TurnAlternative | undefined = alternatives[n - 1];
  if (!chosen) return host.say(`There is no alternative ${n}: the last turn has ${alternatives.length}. /select lists them.`);
  if (chosen.selected) return host.say(`Alternative ${n} is already the one in the story.`);
  if (chosen.status !== 'committed')
    return host.say(`Alternative ${n} cannot go in the story: it ${chosen.status === 'running' ? 'is still being written' : 'failed'}.`);
  if (!(await newerServer(host, '/select', () => host.client.selectAlternative(sessionId, turnId, chosen.id)))) return;
  host.setLatestTurn(chosen.turnId);
  host.say(`Alternative ${n} of ${alternatives.length} is in the story now:`);
  host.printMessages((await host.client.messages(sessionId)).filter((m) => m.turnId === chosen.turnId));
}

/** `/undo`: the latest turn leaves the story; `/undo <turn id>`: that turn and every later one. The story as it now ends is shown. */
export async function undo(host: SteeringHost, arg: string): Promise<void> {
  if (arg && !TURN_ID.test(arg)) return host.say('/undo takes the last turn out of the story; /undo <turn id> takes that turn and every later one.');
  const turnId = arg ? arg.toLowerCase() : host.latestTurn();
  if (!turnId) return host.say('Nothing to undo yet: play a turn first.');
  const sessionId = host.requireSession();
  const answer = await newerServer(host, '/undo', () => host.client.revert(sessionId, turnId));
  if (!answer) return;
  const count = answer.turnIds.length;
  host.say(count === 1 ? 'Undone: that turn left the story (the log keeps it).' : `Undone: ${count} turns left the story (the log keeps them).`);
  const messages = await host.client.messages(sessionId);
  host.setLatestTurn(lastInput(messages)?.turnId ?? null);
  const story = messages.filter((m) => m.role === 'assistant' && m.outputKind === 'story' && m.text);
  if (story.length === 0) return;
  host.say('The story is back to:');
  host.printMessages(story.slice(-1));
}

/**
 * `/edit`: shows the last input; `/edit <text>`: changes it (the story stays as written, and the
 * bookkeepers are not run again); `/edit! <text>` or `/edit --regenerate <text>`: changes it and
 * writes the turn again from it.
 */
export async function edit(host: SteeringHost, arg: string, regenerateAsked: boolean): Promise<void> {
  const flag = /^--regenerate(?:\s+|$)/.exec(arg);
  const regenerate = regenerateAsked || flag !== null;
  const text = flag ? arg.slice(flag[0].length) : arg;
  const sessionId = host.requireSession();
  const last = lastInput(await host.client.messages(sessionId));
  if (!last) return host.say('Nothing to edit yet: play a turn first.');
  if (!text.trim())
    return host.say(`Your last input: “${last.text}”\n/edit <text> changes it (the story stays as written); /edit! <text> also writes the turn again.`);
  const answer = await newerServer(host, '/edit', () => host.client.editMessage(sessionId, last.messageId, text, { regenerate }));
  if (!answer) return;
  const execution = answer.execution;
  if (regenerate && execution) {
    host.say('Edited your last input; the turn is written again:');
    return host.play(() => Promise.resolve(execution));
  }
  host.say('Edited your last input. The story stays as written: /edit! <text> writes the turn again.');
}

/** `/branch`: a new session with the story up to the latest turn (the opening, before any); the player goes on in it. */
export async function branch(host: SteeringHost, arg: string): Promise<void> {
  if (arg) return host.say('/branch takes no argument: it branches at the last turn, and you play the branch.');
  const parent = host.requireSession();
  const atTurnId = host.latestTurn() ?? (await host.client.messages(parent))[0]?.turnId ?? null;
  if (!atTurnId) return host.say('Nothing to branch from yet: play a turn first.');
  const answer = await newerServer(host, '/branch', () => host.client.branch(parent, atTurnId));
  if (!answer) return;
  host.say(`Branched: session ${answer.sessionId} goes on from session ${parent} at turn ${answer.atTurnId}.`);
  host.say(`You play the branch now; /session ${parent} goes back to the other.`);
  await host.open(answer.sessionId);
}
