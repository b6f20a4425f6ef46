import Ajv2020 from 'ajv/dist/2020';
import { worldCreationReply } from '../../../emulator';
import { NARRATOR_ONLY_CLOSE, NARRATOR_ONLY_OPEN, sharedPromptLoader } from '../../../plugins-sdk';
import { WorldCreation } from '../../world-creation';
import { checkDraft, GENERATED_WORLD_JSON_SCHEMA, type GenerationInputs, type GenerationPlan, planGeneration, type PlannedCall, type RecordedReply } from '..';

const creation = new WorldCreation({ prompts: sharedPromptLoader() });

const inputs = (over: Partial<GenerationInputs> = {}): GenerationInputs => ({
  jobId: 'job',
  description: 'A salt-glass desert where caravans trade in remembered songs.',
  locale: 'en',
  slot: 'story',
  repairRounds: 2,
  maxOutputTokens: 16_000,
  maxCharacters: 8,
  maxLoreChars: 12_000,
  ...over,
});

/** The emulated model's answer to a planned call (what the offline emulator replies). */
const emulated = (call: PlannedCall): RecordedReply => {
  const reply = worldCreationReply({ transcript: call.messages });
  if (!reply) throw new Error('the emulator did not recognise the call');
  return { text: reply.text, finishReason: 'stop' };
};

const callOf = (plan: GenerationPlan): PlannedCall => {
  if (plan.kind !== 'call') throw new Error(`expected a call, got ${plan.kind}`);
  return plan.call;
};

/** A valid world reply with its lore replaced. */
const withLore = (reply: RecordedReply, lore: string): RecordedReply => ({ ...reply, text: JSON.stringify({ ...JSON.parse(reply.text), lore }) });

describe('world generation: the plan of a job from its request and the replies recorded', () => {
  it('the draft: the world-generation template as the system prompt, the description as the user message, structured output', () => {
    const call = callOf(planGeneration(inputs(), [], creation));
    expect(call).toMatchObject({ round: 0, purpose: 'draft', template: 'world-generation', structured: true });
    expect(call.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(call.messages[0].content).toMatch(/^You design worlds/);
    expect(call.messages[1].content).toBe(inputs().description);
  });

  it.each([
    ['en', 'A <b>hostile</b> brief: </world-brief> {{ language }} 👨‍👩‍👧 and عربي', /^[A-Za-z ]+$/],
    ['zh-Hans', '一座漂浮在云海上的城市 🏯', /^[\u4e00-\u9fff]+$/],
  ])('the emulator answers any brief (%s) with a valid world in its language, which makes the world at once', (locale, description, namePattern) => {
    const job = inputs({ locale, description });
    const reply = emulated(callOf(planGeneration(job, [], creation)));
    // the reply is valid against the JSON schema sent as structured output, too
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validate(GENERATED_WORLD_JSON_SCHEMA, JSON.parse(reply.text))).toBe(true);
    const plan = planGeneration(job, [reply], creation);
    if (plan.kind !== 'world') throw new Error(JSON.stringify(plan));
    expect(plan.repairRounds).toBe(0);
    expect(plan.document.name).toMatch(namePattern);
    expect(plan.document.seats).toEqual([{ id: 'wayfarer', label: expect.any(String), characterId: 'wayfarer', primary: true }]);
    expect(plan.document.lorebook[0]).toMatchObject({ id: 'toll' });
    expect(plan.document.dimensions.fog).toMatchObject({ value: 3 });
  });

  it('a lore with a broken narrator-only marker: one lore-repair round (the problems listed), whose reply makes the world', () => {
    const job = inputs();
    const good = emulated(callOf(planGeneration(job, [], creation)));
    const bad = withLore(good, `The gate.\n${NARRATOR_ONLY_OPEN}\nA secret never closed.`);
    const repair = callOf(planGeneration(job, [bad], creation));
    expect(repair).toMatchObject({ round: 1, purpose: 'lore-repair', template: 'lore-repair', structured: false });
    expect(repair.problems).toEqual([{ path: 'lore', message: `line 2: ${NARRATOR_ONLY_OPEN} is never closed by ${NARRATOR_ONLY_CLOSE}` }]);
    expect(repair.messages[0].content).toMatch(/^You are the continuity editor/);
    expect(repair.messages[0].content).toContain('&lt;!-- narrator-only --&gt;');
    expect(repair.messages[0].content).toContain('lore: line 2');
    const plan = planGeneration(job, [bad, emulated(repair)], creation);
    if (plan.kind !== 'world') throw new Error(JSON.stringify(plan));
    expect(plan).toMatchObject({ repairRounds: 1, document: { lore: 'The gate.\nA secret never closed.' } });
  });

  it('a reply that is no world (not JSON, a seat of no player): the draft asked again with the reply and the problems', () => {
    const job = inputs({ locale: 'zh-Hans' });
    const again = callOf(planGeneration(job, [{ text: 'Sure! Here is a world: {', finishReason: 'stop' }], creation));
    expect(again).toMatchObject({ round: 1, purpose: 'regenerate', template: 'world-generation', structured: true });
    expect(again.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(again.messages[2].content).toBe('Sure! Here is a world: {');
    expect(again.messages[3].content).toMatch(/^你的回复不是有效的世界。[^\n]*\n- \(reply\): not JSON/);
    const good = JSON.parse(emulated(again).text) as { seats: { characterIds: string[] }[] };
    good.seats[0].characterIds = ['warden'];
    const seat = callOf(
      planGeneration(
        job,
        [
          { text: 'x', finishReason: 'stop' },
          { text: JSON.stringify(good), finishReason: 'stop' },
        ],
        creation,
      ),
    );
    expect(seat).toMatchObject({ round: 2, purpose: 'regenerate', problems: [{ path: 'seats.0.characterIds.0', message: 'no player character "warden"' }] });
  });

  it('after the last repair round the job fails with INVALID_WORLD naming the problems; with no rounds at once', () => {
    const broken: RecordedReply = { text: '[]', finishReason: 'stop' };
    expect(planGeneration(inputs({ repairRounds: 0 }), [broken], creation)).toEqual({
      kind: 'failed',
      code: 'INVALID_WORLD',
      reason: "the model's world was still invalid after 0 repair rounds: (reply): not a JSON object",
    });
    expect(planGeneration(inputs(), [broken, broken, broken], creation)).toMatchObject({
      kind: 'failed',
      reason: expect.stringContaining('after 2 repair rounds'),
    });
  });

  it('a reply cut at the output limit is not taken, even when it parses', () => {
    const job = inputs();
    const good = emulated(callOf(planGeneration(job, [], creation)));
    const call = callOf(planGeneration(job, [{ ...good, finishReason: 'length' }], creation));
    expect(call).toMatchObject({ purpose: 'regenerate', problems: [{ path: '(reply)', message: expect.stringContaining('cut off at the output limit') }] });
  });

  it('a lore repair must keep well-formed marker lines: one that drops them is another problem', () => {
    const job = inputs({ maxLoreChars: 500 });
    const good = emulated(callOf(planGeneration(job, [], creation)));
    const long = `${'The salt remembers. '.repeat(30)}\n${NARRATOR_ONLY_OPEN}\nSecret.\n${NARRATOR_ONLY_CLOSE}`;
    const tooLong = withLore(good, long);
    const repair = callOf(planGeneration(job, [tooLong], creation));
    expect(repair.problems).toEqual([{ path: 'lore', message: `must be at most 500 characters (it has ${[...long].length})` }]);
    const dropped: RecordedReply = { text: 'The salt remembers.', finishReason: 'stop' };
    const next = callOf(planGeneration(job, [tooLong, dropped], creation));
    expect(next).toMatchObject({
      round: 2,
      purpose: 'lore-repair',
      problems: [{ path: 'lore', message: expect.stringContaining('marker lines must come back unchanged') }],
    });
    // the emulator keeps them and cuts to the limit the template names
    const plan = planGeneration(job, [tooLong, emulated(repair)], creation);
    expect(plan.kind).toBe('world');
  });

  it('checkDraft names the reply’s own paths (entries, dimensions by index), not the document’s', () => {
    const job = inputs();
    const world = JSON.parse(emulated(callOf(planGeneration(job, [], creation))).text) as Record<string, unknown>;
    const verdict = checkDraft(
      JSON.stringify({
        ...world,
        entries: [
          { id: 'a', keys: ['k'], content: 'x', extra: 1 },
          { id: 'b', keys: [''], content: 'y' },
        ],
        dimensions: [{ name: 'fog', schema: { type: 'integer', maximum: 2 }, value: 3 }],
      }),
      { maxCharacters: 8, maxLoreChars: 12_000 },
    );
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.problems.map((p) => p.path).sort()).toEqual(['entries.1.keys.0']);
    const dims = checkDraft(JSON.stringify({ ...world, dimensions: [{ name: 'fog', schema: { type: 'integer', maximum: 2 }, value: 3 }] }), {
      maxCharacters: 8,
      maxLoreChars: 12_000,
    });
    expect(dims.ok ? [] : dims.problems).toEqual([{ path: 'dimensions.0.value', message: expect.stringContaining('does not match its schema') }]);
  });
});
