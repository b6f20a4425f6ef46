import { join } from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator, type Reply, type ScriptedCall } from '../../libs/emulator';
import { hmacApiKey, loadKeyPepper, sha256ApiKey } from '../../libs/events';
import { ATTR, SPAN, startTracingForTests, type TestTracing } from '../../libs/telemetry';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { auditedIdentical } from '../support/turns';

/**
 * Issue 17, traces: one turn through the real API and the worker (embedded: the in-process queue)
 * with the SDK registered on an in-memory exporter. Plugins: the archivist (pre-turn), the narrator
 * (story), the clerk (post-turn), which calls `tally` (a plugin tool), `burn` (a plugin tool that
 * throws) and runtime-done.
 */
const PLUGINS = join(__dirname, '..', 'fixtures', 'agent-tool-plugins');
const tool = (name: string, args: unknown): Reply => ({ kind: 'tool', name, args });
const CLERK: Reply[] = [tool('tally', { item: 'lamp', count: 2 }), tool('burn', {}), tool('runtime-done', {})];

function script(call: ScriptedCall): Reply | undefined {
  const runtime = /You are the runtime [a-z-]+\/([a-z-]+)/.exec(call.transcript[0]?.content ?? '')?.[1];
  const results = call.transcript.filter((m) => m.role === 'tool').length;
  if (runtime === 'archivist') return { kind: 'text', text: '{"entries":["a map of the north"]}' };
  if (runtime === 'clerk') return CLERK[results] ?? tool('runtime-done', {});
  return undefined; // the narrator: the emulator's story text
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const traceOf = (span: ReadableSpan) => span.spanContext().traceId;

/** The spans of one trace, by span id, with a lookup of each span's ancestors. */
function tree(spans: ReadableSpan[]) {
  const byId = new Map(spans.map((s) => [idOf(s), s]));
  const ancestors = (span: ReadableSpan): ReadableSpan[] => {
    const parent = parentOf(span) ? byId.get(parentOf(span)!) : undefined;
    return parent ? [parent, ...ancestors(parent)] : [];
  };
  return { byId, ancestors };
}

describe('OpenTelemetry traces of a turn (embedded: in-process queue)', () => {
  let tracing: TestTracing;
  let emulator: ProviderEmulator;
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    tracing = await startTracingForTests();
    emulator = await new ProviderEmulator({ script }).start();
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS, COVEL_EMULATOR_URL: emulator.url });
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
    await emulator?.stop();
    await tracing?.shutdown();
  });

  /** The spans of the execution's trace once its turn job has ended (the last span of a turn). */
  async function traceOfExecution(executionId: string): Promise<ReadableSpan[]> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const last = tracing.spans().find((s) => s.name === SPAN.turnJob && s.attributes[ATTR.execution] === executionId && s.attributes[ATTR.step] === 'done');
      if (last) return tracing.spans().filter((s) => traceOf(s) === traceOf(last));
      if (Date.now() > deadline) throw new Error(`no ended turn job span for ${executionId}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('one trace: API request → turn job runs → runtime jobs → model calls, the tool calls under the clerk; ids, provider, model and tokens as attributes; nothing of it in the log or the requests', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession({});
    const { executionId, turnId } = await client.submit(id, 'Count the lamps');
    expect(await client.waitFor(executionId, 20_000)).toBe('committed');
    const spans = await traceOfExecution(executionId);
    const { ancestors } = tree(spans);

    // every span of this execution, wherever it ran, is in this one trace
    const ofExecution = tracing.spans().filter((s) => s.attributes[ATTR.execution] === executionId);
    expect(new Set(ofExecution.map(traceOf))).toEqual(new Set([traceOf(spans[0])]));

    // the root: the POST that created the input
    const roots = spans.filter((s) => !parentOf(s));
    expect(roots.map((s) => s.name)).toEqual(['POST /v1/sessions/:id/inputs']);
    const api = roots[0];
    expect(api.attributes).toMatchObject({ [ATTR.httpRoute]: '/v1/sessions/:id/inputs', [ATTR.httpStatus]: 202 });
    expect(typeof api.attributes[ATTR.tenant]).toBe('string');

    // each run of the turn job is a child of the API span; three stages (pre-turn, narrative, post-turn) of one
    // runtime each, run inline (one run may hold several), then done
    const turnRuns = spans.filter((s) => s.name === SPAN.turnJob);
    for (const run of turnRuns) expect(parentOf(run)).toBe(idOf(api));
    const stages = turnRuns
      .filter((s) => s.attributes[ATTR.stageRuntimes] !== undefined)
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(stages.flatMap((s) => s.attributes[ATTR.stageRuntimes] as string[])).toEqual(['clerk/archivist', 'narrator/narrator', 'clerk/clerk']);
    for (const run of turnRuns)
      expect(run.attributes).toMatchObject({ [ATTR.tenant]: api.attributes[ATTR.tenant], [ATTR.session]: id, [ATTR.execution]: executionId });

    // each runtime job is a child of the run that started its stage
    const runtimeJobs = spans.filter((s) => s.name === SPAN.runtimeJob);
    expect(runtimeJobs.map((s) => s.attributes[ATTR.runtime]).sort()).toEqual(['archivist', 'clerk', 'narrator']);
    for (const job of runtimeJobs) {
      const stage = stages.find((s) => idOf(s) === parentOf(job));
      expect(stage?.attributes[ATTR.stageRuntimes]).toContain(`${job.attributes[ATTR.plugin]}/${job.attributes[ATTR.runtime]}`);
      expect(job.attributes).toMatchObject({ [ATTR.attempt]: 1, [ATTR.session]: id, [ATTR.runtimeType]: 'agent', [ATTR.runtimeResult]: 'produced' });
    }
    const runtimeOf = (span: ReadableSpan) => ancestors(span).find((a) => a.name === SPAN.runtimeJob)?.attributes[ATTR.runtime];

    // model calls: under their runtime job, provider, model and token counts
    const calls = spans.filter((s) => s.name === SPAN.modelCall);
    expect(calls.map(runtimeOf).sort()).toEqual(['archivist', 'clerk', 'clerk', 'clerk', 'narrator']);
    for (const call of calls) {
      expect(call.status.code).not.toBe(SpanStatusCode.ERROR);
      expect(call.attributes).toMatchObject({ [ATTR.provider]: expect.any(String), [ATTR.model]: expect.any(String) });
      expect(call.attributes[ATTR.inputTokens]).toBeGreaterThan(0);
      expect(call.attributes[ATTR.outputTokens]).toEqual(expect.any(Number));
    }

    // tool calls: under the clerk's runtime job, in the reply's order; the tool that failed (its plugin code threw) is ERROR with its error code
    const tools = spans.filter((s) => s.name === SPAN.toolCall).sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(tools.map((s) => [s.attributes[ATTR.toolName], runtimeOf(s), s.attributes[ATTR.toolOk]])).toEqual([
      ['tally', 'clerk', true],
      ['burn', 'clerk', false],
      ['runtime-done', 'clerk', true],
    ]);
    expect(tools[1].status).toEqual({ code: SpanStatusCode.ERROR, message: 'TOOL_FAILED' });
    expect(tools[1].attributes[ATTR.toolErrorCode]).toBe('TOOL_FAILED');
    expect(tools[0].status.code).not.toBe(SpanStatusCode.ERROR);

    // replay rule: the trace id is in no event and in no request the model received; the audit stays byte-identical
    const traceId = traceOf(api);
    expect(JSON.stringify(await covel.engine.store.readStream(id))).not.toContain(traceId);
    expect(emulator.requests.length).toBeGreaterThan(0);
    for (const r of emulator.requests) expect(r.raw).not.toContain(traceId);
    expect(await auditedIdentical(covel.engine, id, [turnId])).toEqual([true]);
  }, 60_000);

  it('a model call that fails marks its span ERROR with the exception, in the trace of its turn', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession({});
    emulator.injectFault({ status: 400, times: 1, message: 'context too long' });
    const { executionId } = await client.submit(id, 'Shout');
    await expect(client.waitFor(executionId, 20_000)).rejects.toThrow(/context too long/);
    const spans = await traceOfExecution(executionId);
    const failed = spans.filter((s) => s.name === SPAN.modelCall);
    expect(failed).toHaveLength(1); // the first stage's call; the execution failed there
    // by default the span names the error, never its message (it may quote the player, the model or a key)
    expect(failed[0].status).toEqual({ code: SpanStatusCode.ERROR, message: expect.stringMatching(/^PROVIDER_400 \(/) });
    expect(failed[0].events.map((e) => e.name)).toEqual(['exception']);
    expect(JSON.stringify(spans.map((s) => [s.status, s.events, s.attributes]))).not.toContain('context too long');
    const { ancestors } = tree(spans);
    expect(ancestors(failed[0]).map((s) => s.name)).toEqual([SPAN.runtimeJob, SPAN.turnJob, 'POST /v1/sessions/:id/inputs']);
  }, 60_000);

  it('the next input of a session, handed off at the end of a turn, is a trace of its own (not a child of the turn before)', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession({});
    const first = await client.submit(id, 'Count the lamps');
    const second = await client.submit(id, 'Count them again');
    expect(await client.waitFor(second.executionId, 30_000)).toBe('committed');
    const [a, b] = [await traceOfExecution(first.executionId), await traceOfExecution(second.executionId)];
    expect(traceOf(a[0])).not.toBe(traceOf(b[0]));
    expect(a.filter((s) => s.attributes[ATTR.execution] === second.executionId)).toEqual([]);
    expect(b.filter((s) => s.attributes[ATTR.execution] === first.executionId)).toEqual([]);
    // the handed-off turn is one trace: every run of its turn job and every runtime job, under the hand-off's root
    // (an enqueue repeated by a second ender is a no-op: it may leave an empty enqueue span of its own)
    const ofSecond = tracing.spans().filter((s) => s.attributes[ATTR.execution] === second.executionId && s.name !== SPAN.turnEnqueue);
    expect(ofSecond.filter((s) => s.name === SPAN.turnJob).length).toBeGreaterThanOrEqual(1);
    expect(ofSecond.filter((s) => s.name === SPAN.runtimeJob).length).toBeGreaterThan(0);
    expect(new Set(ofSecond.map(traceOf))).toEqual(new Set([traceOf(b[0])]));
    const roots = b.filter((s) => !parentOf(s));
    expect(roots.map((s) => [s.name, s.attributes[ATTR.enqueuedBy]])).toEqual([[SPAN.turnEnqueue, 'hand-off']]);
  }, 60_000);

  it('no API key or hash of one in any span (issue 32): a key made through the API plays a turn, is revoked and refused', async () => {
    const { apiKey } = await covel.engine.tenants.create('keys-in-traces');
    const call = async (method: string, path: string, key: string, body?: unknown) => {
      const res = await fetch(`${covel.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as { id: string; key: string } };
    };
    const made = await call('POST', '/v1/keys', apiKey, { name: 'traced', scopes: ['play', 'read'] });
    expect(made.status).toBe(201);
    const client = new PlayClient(covel.baseUrl, made.body.key);
    const { id } = await client.createSession({});
    const { executionId } = await client.submit(id, 'Count the lamps');
    expect(await client.waitFor(executionId, 20_000)).toBe('committed');
    await traceOfExecution(executionId);
    expect((await call('DELETE', `/v1/keys/${made.body.id}`, apiKey)).status).toBe(200);
    expect((await call('GET', '/v1/sessions', made.body.key)).status).toBe(401);
    // the server span of each request ends as its answer is sent: wait for the refused one's
    const deadline = Date.now() + 5_000;
    while (!tracing.spans().some((s) => s.attributes[ATTR.httpStatus] === 401)) {
      if (Date.now() > deadline) throw new Error('no span of the refused request');
      await new Promise((r) => setTimeout(r, 20));
    }
    const spans = tracing.spans();
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['POST /v1/keys', 'DELETE /v1/keys/:id', SPAN.modelCall]));
    const text = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events, s.status, s.links, s.resource.attributes, s.instrumentationScope]));
    const pepper = await loadKeyPepper(covel.engine.database.db, null);
    for (const key of [apiKey, made.body.key])
      for (const secret of [key, hmacApiKey(key, pepper), sha256ApiKey(key)]) expect(text.includes(secret)).toBe(false);
  }, 60_000);
});
