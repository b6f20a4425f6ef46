import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlayClient } from '../../apps/play/play-client';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT, rebuildRequests } from '../../libs/engine';
import type { StoredEvent } from '../../libs/events';
import { isWellFormedText } from '../../libs/text';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

const root = join(__dirname, '..', '..');

/** Hostile and non-Latin text an opening keeps as it is. */
const UNICODE = '🐉 👩‍👩‍👧‍👦 灰烬之背 مرحبا بالعالم e\u0301';

/** Test worlds beside a copy of Emberback: one whose openings use template variables, one without openings, one whose opening renders to nothing. */
function writeWorlds(dir: string): void {
  cpSync(join(root, 'worlds', 'emberback'), join(dir, 'emberback'), { recursive: true });
  const world = (id: string, front: string, body = 'A quiet place.') => {
    mkdirSync(join(dir, id));
    writeFileSync(join(dir, id, 'WORLD.md'), `---\nid: ${id}\n${front}\n---\n${body}\n`);
  };
  world(
    'teahouse',
    [
      'name: The Teahouse',
      'description: "Tea and {{ fog }}"',
      'plugins: [narrator]',
      'characters:',
      '  - { id: lin, name: "Lin 林", type: player, description: A tea runner. }',
      '  - { id: bo, name: Bo, type: npc, description: The owner. }',
      'seats:',
      '  - { id: runner, label: The runner, characterId: lin, primary: true }',
      'openings:',
      `  - "You are {{ player.character.name }} in {{ world.name }}, turn {{ session.turnNumber }}. ${UNICODE} {{ world.description }} {{ world.nothing }}| {{char}} nods to {{user}}."`,
      '  - "{{ world.lore }}"',
    ].join('\n'),
    'The teahouse stands by the canal.\n<!-- narrator-only -->\nThe owner poisons the tea.\n<!-- /narrator-only -->',
  );
  world('silent', 'name: Silent\nplugins: [narrator]');
  world('hollow', 'name: Hollow\nplugins: [narrator]\nopenings: ["{{ world.nothing }}  "]');
}

/**
 * `POST /v1/sessions { worldId, opening? }` commits the world's opening as turn 0's story message
 * (`session.opened@1`, in the append of `session.created@1`), rendered once with the template
 * variables: every runtime's history holds it, replay and audit read it back byte for byte.
 */
describe('an opening scene', () => {
  let covel: EmbeddedEngine;
  let client: PlayClient;
  let worldsDir: string;

  beforeAll(async () => {
    worldsDir = mkdtempSync(join(tmpdir(), 'covel-worlds-'));
    writeWorlds(worldsDir);
    covel = await startEmbedded({ COVEL_WORLDS_DIR: worldsDir });
    client = await covel.newTenant('opening');
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
    rmSync(worldsDir, { recursive: true, force: true });
  });

  async function post(body: unknown, idempotencyKey?: string) {
    const res = await fetch(`${covel.baseUrl}/v1/sessions`, {
      method: 'POST',
      headers: { ...client.authHeaders(), 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as { id?: string; code?: string; issues?: { path: string; message: string }[] },
      replayed: res.headers.get('idempotent-replayed') === 'true',
    };
  }
  const eventsOf = (id: string): Promise<StoredEvent[]> => covel.engine.store.readStream(id);
  /** Every event in the log (all tenants): nothing else appends while these tests wait. */
  const logLength = async () => (await covel.engine.store.readLog(0, 1_000_000)).length;

  it('Emberback opens with its opening: turn 0, committed with the session in one append, rendered for its player character', async () => {
    const { status, body } = await post({ worldId: 'emberback' });
    expect(status).toBe(201);
    const events = await eventsOf(body.id!);
    expect(events.map((e) => e.type)).toEqual(['session.created@1', 'session.opened@1']);
    // one append: one transaction, consecutive positions
    expect(events[1].globalPosition).toBe(events[0].globalPosition + 1);
    const opened = events[1].type === 'session.opened@1' ? events[1].data : null;
    expect(opened).toMatchObject({ openingIndex: 0 });
    expect(opened!.text).toContain('Ash');
    expect(opened!.text).toContain('Emberback');
    expect(opened!.text).not.toContain('{{');
    const messages = await client.messages(body.id!);
    expect(messages).toEqual([
      expect.objectContaining({
        turnId: opened!.turnId,
        order: 1,
        role: 'assistant',
        sourceType: 'runtime',
        pluginId: null,
        outputKind: 'story',
        text: opened!.text,
      }),
    ]);
  });

  it("the narrator's first request holds the opening in its history, before the player's first input; the rebuild and the audit are byte-identical", async () => {
    const { body } = await post({ worldId: 'teahouse' });
    const id = body.id!;
    const [opening] = await client.messages(id);
    // rendered once at creation: the player's character, the world, turn 0; a value's braces stay text, a variable without a
    // value renders as nothing, a card's macros (no variable) stay as written
    expect(opening.text).toBe(`You are Lin 林 in The Teahouse, turn 0. ${UNICODE} Tea and {{ fog }} | {{char}} nods to {{user}}.`);
    expect(isWellFormedText(opening.text)).toBe(true);
    const { executionId, turnId } = await client.submit(id, 'Order a pot of tea');
    await client.waitFor(executionId, 30_000);
    const events = await eventsOf(id);
    const calling = events.find((e) => e.type === 'llm.calling@1' && e.data.pluginId === 'narrator');
    expect(calling).toBeDefined();
    const request = JSON.parse(calling!.type === 'llm.calling@1' ? calling!.data.body : '{}') as { messages: { role: string; content: unknown }[] };
    const text = (m: { content: unknown }) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
    const at = request.messages.findIndex((m) => m.role === 'assistant' && text(m) === opening.text);
    const input = request.messages.findIndex((m) => m.role === 'user' && text(m).includes('Order a pot of tea'));
    expect(at).toBeGreaterThan(0);
    expect(input).toBeGreaterThan(at);
    // the first message after the system prompt (and the stable pre-history segments): the start of the cached history
    expect(request.messages.slice(0, at).every((m) => m.role === 'system')).toBe(true);
    // the turn is turn 1: the inspector's list and the history count the player's turns only
    const turns = (await (await fetch(`${covel.baseUrl}/v1/sessions/${id}/turns`, { headers: client.authHeaders() })).json()) as { number: number }[];
    expect(turns.map((t) => t.number)).toEqual([1]);
    expect((await client.messages(id)).map((m) => [m.turnId === turnId ? 'turn 1' : 'turn 0', m.role])).toEqual([
      ['turn 0', 'assistant'],
      ['turn 1', 'user'],
      ['turn 1', 'assistant'],
    ]);

    const deps = { ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT };
    const audit = await auditTurn(deps, id, turnId);
    expect(audit.identical).toBe(true);
    const rebuilt = await rebuildRequests(events, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
      historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
    });
    expect(rebuilt.length).toBeGreaterThan(0);
    expect(rebuilt.filter((c) => !c.identical)).toEqual([]);
    // the rebuild reads the recorded opening (never renders it again): another recorded text no longer matches
    const tampered = events.map((e) => (e.type === 'session.opened@1' ? { ...e, data: { ...e.data, text: `${e.data.text}!` } } : e));
    const off = await rebuildRequests(tampered, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
      historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
    });
    expect(off.some((c) => !c.identical)).toBe(true);
  }, 60_000);

  it('`opening` picks one by index; the player never reads the narrator-only lore; `null` starts without one', async () => {
    const second = await post({ worldId: 'teahouse', opening: 1 });
    expect(second.status).toBe(201);
    const [message] = await client.messages(second.body.id!);
    expect(message.text).toBe('The teahouse stands by the canal.');
    expect((await eventsOf(second.body.id!))[1]).toMatchObject({ type: 'session.opened@1', data: { openingIndex: 1 } });
    const none = await post({ worldId: 'teahouse', opening: null });
    expect(none.status).toBe(201);
    expect((await eventsOf(none.body.id!)).map((e) => e.type)).toEqual(['session.created@1']);
    expect(await client.messages(none.body.id!)).toEqual([]);
    // a world without openings, or no world: no opening, as before
    for (const body of [{ worldId: 'silent' }, {}]) {
      const { status, body: answer } = await post(body);
      expect(status).toBe(201);
      expect((await eventsOf(answer.id!)).map((e) => e.type)).toEqual(['session.created@1']);
    }
  });

  it.each([
    ['an index past the last', { worldId: 'teahouse', opening: 2 }, /0 to 1/],
    ['a negative index', { worldId: 'teahouse', opening: -1 }, /whole number from 0/],
    ['a fraction', { worldId: 'teahouse', opening: 0.5 }, /whole number/],
    ['a string', { worldId: 'teahouse', opening: '0' }, /whole number/],
    ['an index for a world without openings', { worldId: 'silent', opening: 0 }, /no openings/],
    ['an index without a world', { opening: 0 }, /no world/],
    ['an opening that renders to nothing', { worldId: 'hollow' }, /empty/],
  ])('%s is a 400 naming `opening`, and nothing is recorded', async (_what, body, message) => {
    const before = await logLength();
    const { status, body: answer } = await post(body, `bad-${JSON.stringify(body)}`);
    expect(status).toBe(400);
    expect(answer.issues).toEqual([{ path: 'opening', message: expect.stringMatching(message) }]);
    expect(await logLength()).toBe(before);
  });

  it('a repeated Idempotency-Key answers the first session and commits its opening once; the key with another opening is a 422', async () => {
    const first = await post({ worldId: 'teahouse' }, 'open-once');
    const again = await post({ worldId: 'teahouse' }, 'open-once');
    expect(first).toMatchObject({ status: 201, replayed: false });
    expect(again).toEqual({ ...first, replayed: true });
    expect((await eventsOf(first.body.id!)).filter((e) => e.type === 'session.opened@1')).toHaveLength(1);
    expect(await client.messages(first.body.id!)).toHaveLength(1);
    // the key guards the request as sent (not what it resolves to, which a world edit may change): naming the default is another body
    for (const other of [
      { worldId: 'teahouse', opening: 0 },
      { worldId: 'teahouse', opening: 1 },
      { worldId: 'teahouse', opening: null },
    ]) {
      expect(await post(other, 'open-once')).toMatchObject({ status: 422, body: { code: 'IDEMPOTENCY_KEY_MISMATCH' } });
    }
  });
});
