import { randomUUID } from 'node:crypto';
import { projectionSpec } from '../../../test/support/projection-spec';
import type { NewEvent } from '../event-types';
import { worldGenerationsProjection } from './world-generations';

const spec = projectionSpec({ inline: worldGenerationsProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const requested = (jobId: string): NewEvent => ({
  type: 'world-generation.requested@1',
  data: { jobId, description: '雾中的关口 🌫️', locale: 'en', slot: 'story', repairRounds: 2, maxOutputTokens: 16_000, maxCharacters: 8, maxLoreChars: 12_000 },
});
const callRequested = (jobId: string, round: number): NewEvent => ({
  type: 'world-generation.call-requested@1',
  data: {
    jobId,
    callId: randomUUID(),
    round,
    purpose: round === 0 ? 'draft' : 'lore-repair',
    template: round === 0 ? 'world-generation' : 'lore-repair',
    slot: 'story',
    provider: 'openai-chat',
    model: 'gpt-4.1-mini',
    body: '{}',
  },
});
const row = (over: Record<string, unknown>) => ({ round: 0, rounds: 2, world_id: null, error_code: null, error_reason: null, ...over });

describe('world_generations (inline projection)', () => {
  it('given nothing, when a job is requested, then it is queued with its rounds', async () => {
    const [t, j] = [randomUUID(), randomUUID()];
    await spec.check({
      when: [{ tenant: t, stream: j, events: [requested(j)] }],
      then: ({ at }) => ({ world_generations: [row({ job_id: j, tenant_id: t, status: 'queued', created_at: at(0), updated_at: at(0) })] }),
    });
  });

  it('given a job, when its draft and a repair round are called and it completes, then it is done with its world at round 1', async () => {
    const [t, j, w] = [randomUUID(), randomUUID(), randomUUID()];
    await spec.check({
      given: [{ tenant: t, stream: j, events: [requested(j)] }],
      when: [
        { tenant: t, stream: j, events: [callRequested(j, 0)] },
        { tenant: t, stream: j, events: [callRequested(j, 1)] },
        { tenant: t, stream: j, events: [{ type: 'world-generation.completed@1', data: { jobId: j, worldId: w, repairRounds: 1 } }] },
      ],
      then: ({ at }) => ({
        world_generations: [row({ job_id: j, tenant_id: t, status: 'done', round: 1, world_id: w, created_at: at(0), updated_at: at(3) })],
      }),
    });
  });

  it('given a drafting job, when it fails, then it is failed with the code and reason; a late call does not move it', async () => {
    const [t, j] = [randomUUID(), randomUUID()];
    await spec.check({
      given: [{ tenant: t, stream: j, events: [requested(j), callRequested(j, 0)] }],
      when: [
        { tenant: t, stream: j, events: [{ type: 'world-generation.failed@1', data: { jobId: j, code: 'PROVIDER_503', reason: 'overloaded' } }] },
        { tenant: t, stream: j, events: [callRequested(j, 1)] },
      ],
      then: ({ at }) => ({
        world_generations: [
          row({ job_id: j, tenant_id: t, status: 'failed', error_code: 'PROVIDER_503', error_reason: 'overloaded', created_at: at(0), updated_at: at(2) }),
        ],
      }),
    });
  });
});
