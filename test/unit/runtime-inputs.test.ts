import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlayClient } from '../../apps/play/play-client';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT, rebuildRequests, SessionJournal } from '../../libs/engine';
import { fixedText } from '../../libs/context';
import type { StoredEvent } from '../../libs/events';
import { seenSlots } from '../fixtures/inputs-plugins/reader/server';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';
import { dataBlock as block, messageTexts } from '../support/request-blocks';

const PLUGINS = join(__dirname, '..', 'fixtures', 'inputs-plugins');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

type Calling = Extract<StoredEvent, { type: 'llm.calling@1' }>;

describe('typed inputs and activations through real turns (io.inputs, <runtime-inputs>, <runtime-activation>)', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS });
  }, 60_000);
  afterAll(() => covel.stop());

  const callings = async (sessionId: string) => (await covel.engine.store.readStream(sessionId)).filter((e): e is Calling => e.type === 'llm.calling@1');

  it('a post-turn runtime reads earlier stages: one, select, many from a contract, the story-text pointer; provenance without resultId', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession();
    seenSlots.length = 0;
    const { executionId, turnId } = await client.submit(id, 'Open the door');
    expect(await client.waitFor(executionId, 30_000)).toBe('committed');
    const calls = await callings(id);
    const reader = calls.find((c) => c.data.pluginId === 'reader')!;
    const narrator = calls.find((c) => c.data.pluginId === 'narrator')!;
    expect(block(narrator.data.body, 'runtime-inputs')).toBeUndefined();
    const inputs = block(reader.data.body, 'runtime-inputs');
    const story = (await client.messages(id)).find((m) => m.outputKind === 'story')!.text;
    expect(inputs).toEqual({
      // the structured output, through the data boundary: the UUID, the ISO time and sessionId are gone, the story date stays
      scene: {
        cardinality: 'one',
        value: { facts: ['the door is oak', 'a guard sleeps'], mood: 'tense', date: 'the third day of spring' },
        source: { pluginId: 'facts', runtimeId: 'facts' },
      },
      mood: { cardinality: 'one', value: 'tense', source: { pluginId: 'facts', runtimeId: 'facts' } },
      // many from a contract: both providers' arrays, in catalog order, each provider's provenance
      facts: {
        cardinality: 'many',
        items: ['the door is oak', 'a guard sleeps', 'the king is ill'],
        sources: [
          { pluginId: 'facts', runtimeId: 'facts' },
          { pluginId: 'rumors', runtimeId: 'rumors' },
        ],
      },
      // `one` whose value is entirely this turn's story text: one sentence pointing at the message
      story: { cardinality: 'one', value: fixedText('en').storyPointer, source: { pluginId: 'narrator', runtimeId: 'narrator' } },
      // `many` is not replaced: the text itself
      storyLength: { cardinality: 'many', items: [story], source: { pluginId: 'narrator', runtimeId: 'narrator' } },
    });
    // the story text is in the conversation once: the assistant message after the player's input
    expect(messageTexts(reader.data.body).filter((t) => t.includes(story))).toHaveLength(2); // the message, and storyLength's copy
    // no resultId in the prompt; the hook's read-only sources carry it (the output's message id)
    expect(reader.data.body).not.toContain('resultId');
    const outputs = (await covel.engine.store.readStream(id)).filter((e) => e.type === 'runtime.output.produced@1');
    const factsResult = outputs.find((e) => e.data.pluginId === 'facts')!.data as { messageId: string };
    expect(reader.data.body).not.toContain(factsResult.messageId);
    const readerSlots = seenSlots.find((s) => s.runtimeId === 'reader')!.inputSlots as { binding: string; value?: unknown; source: { resultId?: string } }[];
    expect(readerSlots.find((s) => s.binding === 'scene')!.source.resultId).toBe(factsResult.messageId);
    expect(readerSlots.find((s) => s.binding === 'story')!.value).toBe(story); // the original value, not the pointer
    // replay rebuilds every request byte for byte
    const audit = await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId);
    expect(audit.identical).toBe(true);
  }, 60_000);

  it('a zh-Hans session: the story-text pointer is in the instruction language (Chinese); the tool-facing slot keeps the story', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession({ locale: 'zh-CN' });
    seenSlots.length = 0;
    const { executionId, turnId } = await client.submit(id, '打开门');
    expect(await client.waitFor(executionId, 30_000)).toBe('committed');
    const reader = (await callings(id)).find((c) => c.data.pluginId === 'reader')!;
    expect((block(reader.data.body, 'runtime-inputs') as Record<string, unknown>).story).toEqual({
      cardinality: 'one',
      value: '本回合的故事文本：见对话中玩家输入之后的助手消息。',
      source: { pluginId: 'narrator', runtimeId: 'narrator' },
    });
    const story = (await client.messages(id)).find((m) => m.outputKind === 'story')!.text;
    const readerSlots = seenSlots.find((s) => s.runtimeId === 'reader')!.inputSlots as { binding: string; value?: unknown }[];
    expect(readerSlots.find((s) => s.binding === 'story')!.value).toBe(story);
    expect((await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId)).identical).toBe(true);
  }, 60_000);

  it('a manual activation through the API runs its runtime alone, its payload in <runtime-activation> with ids and times removed; rebuilt identical', async () => {
    const { apiKey } = await covel.engine.tenants.create('manual');
    const post = (path: string, body: unknown) =>
      fetch(`${covel.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const created = (await (await post('/v1/sessions', {})).json()) as { id: string };
    const id = created.id;
    const payload = { question: 'Where is the key?', askedAt: '2026-03-04T05:06:07.000Z', ref: '0f9e8d7c-6b5a-4c3d-8e1f-2a3b4c5d6e7f', sessionId: id };
    const res = await post(`/v1/sessions/${id}/activations`, { pluginId: 'oracle', runtimeId: 'oracle', payload });
    expect(res.status).toBe(202);
    const { executionId, turnId } = (await res.json()) as { executionId: string; turnId: string };
    const client = new PlayClient(covel.baseUrl, apiKey);
    expect(await client.waitFor(executionId, 30_000)).toBe('committed');
    expect((await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId)).identical).toBe(true);
    const events = await covel.engine.store.readStream(id);
    const activated = events.find((e) => e.type === 'runtime.activated@1')!;
    expect(activated.data).toMatchObject({ kind: 'manual', pluginId: 'oracle', runtimeId: 'oracle', payload });
    const calls = events.filter((e): e is Calling => e.type === 'llm.calling@1');
    expect(calls.map((c) => c.data.pluginId)).toEqual(['oracle']); // only that runtime; no turn of the auto runtimes
    expect(block(calls[0].data.body, 'runtime-activation')).toEqual({ kind: 'manual', payload: { question: 'Where is the key?' } });
    expect(calls[0].data.body).not.toMatch(UUID);
    expect(calls[0].data.body).not.toContain('2026-03-04');
    // the oracle's story is committed as history (no player row); replay rebuilds the request
    expect((await client.messages(id)).map((m) => [m.role, m.outputKind])).toEqual([['assistant', 'story']]);
    const rebuilt = await rebuildRequests(events, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
      historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
    });
    expect(rebuilt.map((r) => r.identical)).toEqual([true]);

    // 4xx naming the field: an unknown runtime, a runtime that is not manual, a bad payload
    const bad = async (body: unknown) => {
      const r = await post(`/v1/sessions/${id}/activations`, body);
      return { status: r.status, text: await r.text() };
    };
    const unknown = await bad({ pluginId: 'oracle', runtimeId: 'nobody', payload: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('runtimeId');
    const auto = await bad({ pluginId: 'reader', runtimeId: 'reader' });
    expect(auto.status).toBe(400);
    expect(auto.text).toMatch(/runtimeId.*not manual/);
    const eventOnly = await bad({ pluginId: 'alarm', runtimeId: 'alarm' });
    expect(eventOnly.text).toContain('alarm.raised');
    const big = await bad({ pluginId: 'oracle', runtimeId: 'oracle', payload: { text: 'x'.repeat(20_000) } });
    expect(big.status).toBe(400);
    expect(big.text).toContain('payload');
    // an Idempotency-Key makes a retried request answer the first activation, recording nothing
    const once = (key: string, question: string) =>
      fetch(`${covel.baseUrl}/v1/sessions/${id}/activations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ pluginId: 'oracle', runtimeId: 'oracle', payload: { question } }),
      });
    const first = await once('ask-1', 'Who guards the gate?');
    const again = await once('ask-1', 'Who guards the gate?');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const firstAnswer = (await first.json()) as { executionId: string };
    expect(await again.json()).toEqual(firstAnswer);
    expect((await once('ask-1', 'Something else?')).status).toBe(422);
    await client.waitFor(firstAnswer.executionId, 30_000);
    expect((await covel.engine.store.readStream(id)).filter((e) => e.type === 'runtime.activated@1')).toHaveLength(2);
    // tenant-scoped: another tenant's key does not find the session
    const other = await covel.engine.tenants.create('other');
    const foreign = await fetch(`${covel.baseUrl}/v1/sessions/${id}/activations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ pluginId: 'oracle', runtimeId: 'oracle' }),
    });
    expect(foreign.status).toBe(404);
  }, 60_000);

  it('an emitted event runs the runtimes its topic triggers, each as its own execution with <runtime-activation> (test-only emission)', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession();
    const tenantId = (await covel.engine.store.streamHead(id)).tenantId!;
    const started = await covel.engine.activations.emit({
      tenantId,
      sessionId: id,
      topic: 'alarm.raised',
      payload: { where: 'the gate', at: '2026-03-04T05:06:07Z' },
    });
    expect(started.map((s) => `${s.pluginId}/${s.runtimeId}`)).toEqual(['alarm/alarm']);
    expect(await client.waitFor(started[0].executionId, 30_000)).toBe('committed');
    expect(await covel.engine.activations.emit({ tenantId, sessionId: id, topic: 'nobody.listens', payload: {} })).toEqual([]);
    const events = await covel.engine.store.readStream(id);
    const calls = events.filter((e): e is Calling => e.type === 'llm.calling@1');
    expect(calls.map((c) => c.data.pluginId)).toEqual(['alarm']);
    expect(block(calls[0].data.body, 'runtime-activation')).toEqual({ kind: 'event', topic: 'alarm.raised', payload: { where: 'the gate' } });
    const rebuilt = await rebuildRequests(events, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
      historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
    });
    expect(rebuilt.map((r) => r.identical)).toEqual([true]);
  }, 60_000);

  it('form values submitted with an input are read once per execution: recorded in its event, the same for every runtime (ExecutionJournal.lastFormValues)', async () => {
    const { apiKey } = await covel.engine.tenants.create('form');
    const post = (path: string, body: unknown) =>
      fetch(`${covel.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const { id } = (await (await post('/v1/sessions', {})).json()) as { id: string };
    const formValues = { name: 'Ash', class: 'ranger', level: 3 };
    const res = await post(`/v1/sessions/${id}/inputs`, { text: 'I am ready', formValues });
    expect(res.status).toBe(202);
    const { executionId } = (await res.json()) as { executionId: string };
    const client = new PlayClient(covel.baseUrl, apiKey);
    expect(await client.waitFor(executionId, 30_000)).toBe('committed');
    const events = await covel.engine.store.readStream(id);
    expect(events.find((e) => e.type === 'player-input.submitted@1')!.data).toMatchObject({ formValues });
    expect(new SessionJournal(events).get(executionId)!.lastFormValues).toEqual(formValues);
    // bad form values: a 400 naming the field
    for (const bad of [['a list'], 'text', { big: 'x'.repeat(20_000) }]) {
      const r = await post(`/v1/sessions/${id}/inputs`, { text: 'again', formValues: bad });
      expect(r.status).toBe(400);
      expect(await r.text()).toContain('formValues');
    }
  }, 60_000);
});

describe('a binding the execution cannot satisfy', () => {
  it('fails the execution with an error naming plugin, runtime, binding and why (cardinality one, select finds nothing)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'covel-inputs-plugins-'));
    const write = (name: string, text: string) => {
      mkdirSync(join(dir, name), { recursive: true });
      writeFileSync(join(dir, name, 'PLUGIN.md'), text);
    };
    write(
      'facts',
      '---\nid: facts\nname: Facts\nversion: "1"\nruntime:\n  schedule: { stage: pre-turn }\n  outputKind: structured\n---\n<output-schema>{"const":{"mood":"calm"}}</output-schema>',
    );
    write(
      'reader',
      '---\nid: reader\nname: Reader\nversion: "1"\nruntime:\n  schedule: { stage: post-turn }\n  io:\n    inputs:\n      threat: { from: { runtime: facts/facts }, cardinality: one, select: /threat/level }\n---\nRead.',
    );
    const covel = await startEmbedded({ COVEL_PLUGINS_DIR: dir });
    try {
      const client = await covel.newTenant();
      const { id } = await client.createSession();
      const { executionId } = await client.submit(id, 'Look around');
      await expect(client.waitFor(executionId, 30_000)).rejects.toThrow(
        'plugin reader: runtime reader: io.inputs.threat: select "/threat/level" finds nothing in the result of facts/facts',
      );
      const failed = (await covel.engine.store.readStream(id)).find((e) => e.type === 'execution.failed@1')!;
      expect(failed.data).toMatchObject({ error: { code: 'RUNTIME_INPUT_UNRESOLVED' } });
      // no request was sent for the reader
      expect((await covel.engine.store.readStream(id)).filter((e) => e.type === 'llm.calling@1').map((e) => e.data.pluginId)).toEqual(['facts']);
    } finally {
      await covel.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
