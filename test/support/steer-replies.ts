import type { EmulatorScript, Reply } from '../../libs/emulator';

/**
 * Scripted, deterministic replies for Emberback with every plugin it lists (issue 30's acceptance
 * tests): for each player input a fixed reply set — the narrator's story text and one tool call per
 * bookkeeper (affinity, char-creator, world-time, world-ir, codex, memory, npc-graph, world-init's
 * dimension tracker) — so every plugin writes data every turn. Every written value carries the turn's
 * tag (`T3a`: input 3, reply set `a`), so a request or a fold that shows a value of the wrong turn or
 * the wrong alternative says which. Reply set `b` of an input is a different set (another story text,
 * other values): what a regeneration answers when the test switches the input to it.
 */

/** One tool call of a bookkeeper. */
interface ToolReply {
  name: string;
  args: Record<string, unknown>;
}

/** What the emulated models answer in one turn. */
export interface TurnReplies {
  story: string;
  tools: ToolReply[];
}

/** The player inputs the tests play, in order (`INPUTS[0]` is I1). */
export const INPUTS = [
  'Walk down to the river',
  'Ask Mira about the ferry',
  'Watch the vents for a while',
  'Find the Wardens and their ledger',
  'Greet the salt-trader the caravan left behind',
  'Listen for the bell',
] as const;

/** One call of every bookkeeper, each value tagged with `tag`; `n` varies the numbers. */
function bookkeeping(tag: string, n: number, options: { createCharacter?: boolean } = {}): ToolReply[] {
  const characters: ToolReply = options.createCharacter
    ? {
        name: 'create-character',
        args: {
          id: 'salt-trader',
          name: 'The salt-trader',
          type: 'npc',
          description: `${tag}: left behind when the last caravan went down the tail road.`,
          fields: { health: 7, warmth: 2, trust: -1, status: `${tag}: stranded by the lower vents` },
        },
      }
    : { name: 'update-character-fields', args: { updates: [{ id: 'ash', fields: { warmth: n % 6, status: `${tag}: the courier's state` } }] } };
  return [
    {
      name: 'update-affinity',
      args: {
        updates: [
          { character: 'mira', score: n, feeling: `${tag}: what Mira feels` },
          { character: 'tomas', score: -n, feeling: `${tag}: what Tomas feels` },
        ],
      },
    },
    characters,
    { name: 'advance-clock', args: { minutes: 15 * n } },
    {
      name: 'record-world-ir',
      args: { terms: [{ term: `${tag} landing`, kind: 'place' }], facts: [{ subject: 'ash', predicate: 'is at', object: `${tag} landing` }] },
    },
    { name: 'record-codex-entries', args: { entries: [{ term: `${tag} landing`, category: 'place', summary: `${tag}: a landing on the ash river.` }] } },
    { name: 'memory-append', args: { block: 'courier-notes', line: `${tag}: a note of the courier.` } },
    { name: 'set-relations', args: { relations: [{ from: 'mira', to: 'ash', relation: `${tag}: how Mira stands to the courier` }] } },
    {
      name: 'update-dimensions',
      args: {
        updates: [
          { id: 'dragon-sleep', value: 10 - n },
          { id: 'village-mood', value: `${tag}: the village's mood.` },
        ],
      },
    },
  ];
}

const story = (tag: string, text: string) => `${text} (${tag})`;

/** Each input's reply sets: `a` as played, `b` for a regeneration that answers otherwise. */
export const REPLY_BOOK: Record<string, { a: TurnReplies; b: TurnReplies }> = {
  [INPUTS[0]]: {
    a: { story: story('T1a', 'The path drops to the warm river; steam hangs over the landing.'), tools: bookkeeping('T1a', 1) },
    b: { story: story('T1b', 'You slip on the ash and slide the last yards to the water.'), tools: bookkeeping('T1b', 2) },
  },
  [INPUTS[1]]: {
    a: { story: story('T2a', 'Mira looks up from her net. "The ferry runs when the river lets it."'), tools: bookkeeping('T2a', 2) },
    b: { story: story('T2b', 'Mira pretends not to hear, and goes on mending.'), tools: bookkeeping('T2b', 3) },
  },
  [INPUTS[2]]: {
    a: { story: story('T3a', 'Blue smoke curls from the nearest vent, then thins to nothing.'), tools: bookkeeping('T3a', 3) },
    b: { story: story('T3b', 'The vents breathe out in a long, slow sigh, and the ground shivers.'), tools: bookkeeping('T3b', 5) },
  },
  [INPUTS[3]]: {
    a: { story: story('T4a', 'Tomas Vell turns the soot-black ledger away from you.'), tools: bookkeeping('T4a', 4, { createCharacter: true }) },
    b: { story: story('T4b', 'The watchtower is empty; the ledger lies open.'), tools: bookkeeping('T4b', 6) },
  },
  [INPUTS[4]]: {
    a: { story: story('T5a', 'The salt-trader offers you a pinch of grey salt for luck.'), tools: bookkeeping('T5a', 5) },
    b: { story: story('T5b', 'The salt-trader has already packed his cart.'), tools: bookkeeping('T5b', 7) },
  },
  [INPUTS[5]]: {
    a: { story: story('T6a', 'The bell rings once from the watchtower, and the village holds its breath.'), tools: bookkeeping('T6a', 6) },
    b: { story: story('T6b', 'No bell rings; only the wind.'), tools: bookkeeping('T6b', 8) },
  },
};

/** `(T3a)`: the tag that ends each story text of the book. */
const STORY_TAG = /\(T(\d)[ab]\)/;

/**
 * The input of the turn a request is for: the latest user message that is one of the inputs, else
 * the latest that holds a story text of the book (world-ir sends one user message of its own, with
 * the story text in it): that story's input.
 */
function turnInput(transcript: readonly { role: string; content: string }[]): string | undefined {
  for (const m of [...transcript].reverse()) {
    if (m.role !== 'user') continue;
    if (Object.hasOwn(REPLY_BOOK, m.content)) return m.content;
    const tag = STORY_TAG.exec(m.content);
    if (tag) return INPUTS[Number(tag[1]) - 1];
  }
  return undefined;
}

const RUNTIME = /^\[RUNTIME\]\nYou are the runtime (\S+?)\/(\S+) of /;

/**
 * The emulator script: a request is answered from the reply set (`variant(input)`, default `a`)
 * of the latest player input in its messages: the narrator with the story text, a bookkeeper with
 * the first of the set's tool calls its request offers (and does not force away). A call after a tool
 * result, or one that is not a runtime's, is left to the emulator.
 */
export function steerScript(variant: (input: string) => 'a' | 'b', options: { storyPadding?: string } = {}): EmulatorScript {
  return (call): Reply | undefined => {
    if (call.afterToolResult || call.toolChoice === 'none') return undefined;
    const system = call.system ?? call.transcript.find((m) => m.role === 'system')?.content ?? '';
    const runtime = RUNTIME.exec(system);
    const input = turnInput(call.transcript);
    if (!runtime || input === undefined) return undefined;
    const replies = REPLY_BOOK[input][variant(input)];
    if (`${runtime[1]}/${runtime[2]}` === 'narrator/narrator') return { kind: 'text', text: `${replies.story}${options.storyPadding ?? ''}` };
    const offered = new Set(call.tools.map((t) => t.name));
    const forced = call.toolChoice !== 'auto' && call.toolChoice !== 'required' ? call.toolChoice : null;
    const tool = replies.tools.find((t) => offered.has(t.name) && (forced === null || forced === t.name));
    return tool ? { kind: 'tool', name: tool.name, args: tool.args } : undefined;
  };
}
