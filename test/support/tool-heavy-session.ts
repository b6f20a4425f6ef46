import { llmToml } from './llm-toml';
import type { Reply, ScriptedCall } from '../../libs/emulator';

/**
 * A tool-heavy session for the budget (issue 13): the narrator of test/fixtures/budget-plugins
 * searches `shelves` shelves per turn (each result ~540 tokens) before it writes, on a 4k window
 * with a 512-token reserve (input limit 3,584), so every turn's later steps are over the limit.
 */
export const TOOL_HEAVY_LLM = llmToml({ story: { contextWindow: 4096, maxOutputTokens: 512 }, fast: { contextWindow: 4096, maxOutputTokens: 512 } });

/** The player's text of turn `n` (1-based): the script reads the turn number back from it. */
export const toolHeavyInput = (n: number) => `Turn ${n}: I search the flooded archive for the warden's ledger.`;

/**
 * The emulator's script: `search-archive` for shelves 1..shelves of the turn, then the emulator's own
 * story text. The shelves already read are found in what the request still shows of them — a full or
 * elided result keeps its summary ("Shelf n (turn t)"), a frozen digest its arguments — not by
 * counting tool messages, which the budget collapses.
 */
export function toolHeavyScript(shelves: number): (call: ScriptedCall) => Reply | undefined {
  return (call) => {
    const input = [...call.transcript].reverse().find((m) => m.role === 'user' && m.content.startsWith('Turn '))?.content ?? '';
    const turn = Number(/^Turn (\d+)/.exec(input)?.[1] ?? 1);
    const read = new RegExp(`Shelf (\\d+) \\(turn ${turn}\\)|"shelf":(\\d+),"turn":${turn}\\b`, 'g');
    let last = 0;
    for (const m of call.transcript) for (const hit of m.content.matchAll(read)) last = Math.max(last, Number(hit[1] ?? hit[2]));
    return last < shelves ? { kind: 'tool', name: 'search-archive', args: { shelf: last + 1, turn } } : undefined;
  };
}
