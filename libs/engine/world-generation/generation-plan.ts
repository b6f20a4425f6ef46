import type { EventData, WorldGenerationCallPurpose } from '../../events';
import { promptLocaleOf, type WorldDocument } from '../../plugins-sdk';
import { truncateText } from '../../text';
import { MAX_REPAIR_LORE_CHARS, type WorldCreation } from '../world-creation';
import {
  checkDraft,
  checkRepairedLore,
  type GeneratedWorld,
  type GenerationLimits,
  type GenerationProblem,
  type GenerationVerdict,
  loreOnly,
  MAX_PROBLEMS,
} from './generated-world';
import { wellFormedText } from './recordable-text';

/** What a job was asked (its `world-generation.requested@1`). */
export type GenerationInputs = EventData<'world-generation.requested@1'>;

/** A reply recorded for a call (`world-generation.call-responded@1`). */
export interface RecordedReply {
  text: string;
  finishReason: string | null;
}

export interface PlannedMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One model call of a job, as the plan makes it (the wire body is the slot's adapter's: `generationModelCall`). */
export interface PlannedCall {
  /** 0: the draft; n: the n-th repair round. */
  round: number;
  purpose: WorldGenerationCallPurpose;
  template: 'world-generation' | 'lore-repair';
  /** What the reply before was found to have wrong (a repair round's reasons). */
  problems?: GenerationProblem[];
  messages: PlannedMessage[];
  /** Structured output (the world's JSON schema): a draft's; a lore repair's reply is text. */
  structured: boolean;
}

/** What a job does next, given the replies recorded so far. */
export type GenerationPlan =
  | { kind: 'call'; call: PlannedCall }
  | { kind: 'world'; document: WorldDocument; repairRounds: number }
  | { kind: 'failed'; code: 'INVALID_WORLD'; reason: string };

/** The user message that asks for the draft again with what was wrong (code's own text, in the instruction language; spec §6 "Retry hints"). */
const REGENERATE_TEXT = {
  en: {
    intro: 'Your reply is not a valid world. Fix these problems and reply with the whole corrected JSON object and nothing else:',
    cut: 'the reply was cut off at the output limit: write a shorter world (less lore, fewer characters and entries)',
  },
  'zh-Hans': {
    intro: '你的回复不是有效的世界。请修正以下问题，并且只回复修正后的完整 JSON 对象，不要附加任何内容：',
    cut: '回复在输出上限处被截断：请写一个更短的世界（更少的设定、角色和条目）',
  },
} as const;

/** A provider's finish reason for a reply cut at its output limit. */
const CUT = new Set(['length', 'max_tokens', 'max_output_tokens']);

/**
 * The job's next step, derived from its request and the replies recorded so far, in order (reply n
 * answers the call of round n). Pure: the worker runs it to know what to send (a retried job reuses
 * every recorded reply and asks only what is missing), the audit runs it to derive every recorded
 * call again. Round 0 is the draft (the `world-generation` template, the world's JSON schema as
 * structured output); a reply that fails the check gets a repair round, at most `repairRounds` of
 * them: a world whose only problems are in its lore gets the `lore-repair` template (the reply is
 * the new lore), any other the draft asked again with the problems listed (`regenerate`).
 */
export function planGeneration(inputs: GenerationInputs, replies: readonly RecordedReply[], creation: WorldCreation): GenerationPlan {
  const limits: GenerationLimits = {
    maxCharacters: inputs.maxCharacters,
    maxLoreChars: inputs.maxLoreChars,
    ...(inputs.plugins ? { plugins: inputs.plugins } : {}),
  };
  const draft = creation.generationRequest({
    description: inputs.description,
    locale: inputs.locale,
    maxCharacters: inputs.maxCharacters,
    maxLoreChars: inputs.maxLoreChars,
  });
  const draftMessages: PlannedMessage[] = [
    { role: 'system', content: draft.system },
    { role: 'user', content: draft.user },
  ];
  let call: PlannedCall = { round: 0, purpose: 'draft', template: 'world-generation', messages: draftMessages, structured: true };
  /** The last reply that was a whole world (a draft's or a regenerated one's). */
  let lastDraft = '';
  /** The world as far as the last reply could be read (a lore repair works on it). */
  let world: GeneratedWorld | null = null;
  for (let round = 0; ; round++) {
    const reply = replies[round];
    if (reply === undefined) return { kind: 'call', call };
    const repairing: boolean = call.purpose === 'lore-repair' && world !== null;
    let verdict: GenerationVerdict = repairing ? checkRepairedLore(world!, reply.text, limits) : checkDraft(reply.text, limits);
    if (reply.finishReason !== null && CUT.has(reply.finishReason.toLowerCase())) {
      const cut: GenerationProblem = { path: repairing ? 'lore' : '(reply)', message: REGENERATE_TEXT.en.cut };
      verdict = { ok: false, world: verdict.world, problems: [cut, ...(verdict.ok ? [] : verdict.problems)].slice(0, MAX_PROBLEMS) };
    }
    if (verdict.ok) return { kind: 'world', document: verdict.document, repairRounds: round };
    if (!repairing) lastDraft = reply.text;
    world = verdict.world;
    if (round >= inputs.repairRounds) return { kind: 'failed', code: 'INVALID_WORLD', reason: failureReason(verdict.problems, round) };
    const problems = verdict.problems;
    call =
      world !== null && loreOnly(problems)
        ? loreRepairCall(round + 1, world, problems, inputs, creation)
        : {
            round: round + 1,
            purpose: 'regenerate',
            template: 'world-generation',
            problems,
            messages: regenerateMessages(draftMessages, lastDraft, problems, inputs.locale),
            structured: true,
          };
  }
}

function loreRepairCall(round: number, world: GeneratedWorld, problems: GenerationProblem[], inputs: GenerationInputs, creation: WorldCreation): PlannedCall {
  const request = creation.loreRepairRequest({
    world: {
      name: clip(world.name, 200),
      description: clip(world.description, 2_000),
      lore: clip(world.lore, MAX_REPAIR_LORE_CHARS),
      characters: world.characters.slice(0, 200).map((c) => ({ name: clip(c.name, 200), type: c.type, description: clip(c.description, 4_000) })),
    },
    problems: problems.map(problemLine).map((line) => clip(line, 2_000)),
    locale: inputs.locale,
    maxLoreChars: inputs.maxLoreChars,
  });
  return {
    round,
    purpose: 'lore-repair',
    template: 'lore-repair',
    problems,
    messages: [
      { role: 'system', content: request.system },
      { role: 'user', content: request.user },
    ],
    structured: false,
  };
}

/** The draft's exchange, the reply that failed, and the problems to fix. */
function regenerateMessages(draft: readonly PlannedMessage[], reply: string, problems: readonly GenerationProblem[], locale: string): PlannedMessage[] {
  const text = REGENERATE_TEXT[promptLocaleOf(locale)];
  const fix = [text.intro, ...problems.map((p) => `- ${problemLine(p)}`)].join('\n');
  // an empty reply is no message (providers refuse an empty assistant turn)
  return [...draft, ...(reply.trim() === '' ? [] : [{ role: 'assistant' as const, content: reply }]), { role: 'user', content: fix }];
}

const problemLine = (p: GenerationProblem) => `${p.path}: ${p.message}`;

/** Text as a request takes it: at most `max` code points, well-formed (a lone surrogate a model wrote becomes U+FFFD). */
function clip(text: string, max: number): string {
  return truncateText(wellFormedText(text), max);
}

function failureReason(problems: readonly GenerationProblem[], round: number): string {
  const shown = problems.slice(0, 5).map(problemLine).join('; ');
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
  return `the model's world was still invalid after ${round} repair round${round === 1 ? '' : 's'}: ${shown}${more}`;
}
