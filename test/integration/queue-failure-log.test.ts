import { randomBytes, randomUUID } from 'node:crypto';
import { BullMqTurnQueue, createLogger, deleteQueueKeys, type JobOutcome, type RuntimeJob, type TurnJob, type TurnStep } from '../../libs/engine';
import { REDIS_URL } from '../support/stack';

/**
 * The BullMQ driver's line about a failed job attempt: the job's ids (from its data in Redis), the
 * error's code and name, and not its message (it may quote the model), on the real Redis.
 */
const prefix = `covel-logs-${randomBytes(4).toString('hex')}`;
afterAll(async () => {
  await deleteQueueKeys(REDIS_URL, prefix);
});

it('a runtime job attempt that fails is logged with tenant, session, execution, attempt and runtime, without its message', async () => {
  const lines: string[] = [];
  const logger = createLogger({ format: 'json', level: 'info', playerText: false, destination: { write: (l) => void lines.push(l) } });
  const queue = new BullMqTurnQueue({
    redisUrl: REDIS_URL,
    prefix,
    logger,
    retry: { turnAttempts: 3, runtimeAttempts: 3, backoffMs: 10 },
    consumer: { concurrency: 2, lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
  });
  const turn: TurnJob = { executionId: randomUUID(), sessionId: randomUUID(), tenantId: randomUUID() };
  const child: RuntimeJob = { ...turn, attempt: 2, pluginId: 'narrator', runtimeId: 'story' };
  let failures = 0;
  let resolveDone!: () => void;
  const finished = new Promise<void>((r) => (resolveDone = r));
  try {
    queue.consume({
      turn: async (_job, ctx): Promise<TurnStep> => {
        if (ctx.attemptsMade === 0 && failures === 0) return { kind: 'awaitChildren', children: [child] };
        resolveDone();
        return { kind: 'done' };
      },
      runtime: async (): Promise<JobOutcome> => {
        if (failures++ === 0) throw Object.assign(new Error('the model wrote: Zanzibar-periwinkle'), { code: 'MODEL_GLITCH' });
        return { kind: 'done' };
      },
    });
    await queue.enqueue(turn);
    await finished;
  } finally {
    await queue.close();
  }
  const failed = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => typeof e.msg === 'string' && e.msg.includes('failed, will retry'));
  expect(failed).toMatchObject({
    level: 'warn',
    tenantId: turn.tenantId,
    sessionId: turn.sessionId,
    executionId: turn.executionId,
    attempt: 2,
    runtime: 'narrator/story',
    err: { name: 'Error', code: 'MODEL_GLITCH' },
  });
  expect(lines.join('')).not.toContain('Zanzibar');
}, 30_000);
