import { PlayClient } from '../../apps/play/play-client';
import { openDatabase, TenantStore } from '../../libs/events';
import { startStack, type Stack } from '../support/stack';

describe('tenant isolation on PostgreSQL + BullMQ', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: 1 });
  }, 120_000);
  afterAll(() => stack?.stop(), 60_000);

  it("tenant A's key cannot read or write tenant B's session", async () => {
    const open = await openDatabase({ kind: 'postgres', url: stack.databaseUrl });
    const { apiKey } = await new TenantStore(open.db).create('b');
    await open.close();
    const a = stack.client;
    const b = new PlayClient(stack.baseUrl, apiKey);
    const { id } = await b.createSession();
    const { executionId } = await b.submit(id, 'only for b');
    await b.waitFor(executionId, 30_000);
    await expect(a.messages(id)).rejects.toThrow(/404/);
    await expect(a.request('GET', `/v1/sessions/${id}/llm-calls`)).rejects.toThrow(/404/);
    await expect(a.submit(id, 'intrude')).rejects.toThrow(/404/);
    await expect(a.execution(executionId)).rejects.toThrow(/404/);
    expect(await b.messages(id)).toHaveLength(2);
  }, 60_000);
});
