import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Reply, ScriptedCall } from '../../libs/emulator';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT } from '../../libs/engine';
import { historyReadLimit } from '../../libs/engine/execution/deps';
import { eventually, turnHarness } from '../../libs/engine/turn/test/harness';
import { TurnRunner } from '../../libs/engine/turn/turn-runner';
import { WorldCatalog } from '../../libs/engine/catalog/world-catalog';
import { loadWorld, PluginManifestError } from '../../libs/plugins-sdk';
import { endpointFor, parseLlmConfig, ProviderRegistry } from '../../libs/providers';
import { startEmbedded } from '../support/embedded';
import { llmToml } from '../support/llm-toml';

const WORLDS = join(__dirname, '..', 'fixtures', 'scan-worlds');

describe('§4 lorebook scan range: extra.scanDepth', () => {
  it('the loader reads extra.scanDepth as the spec spells it (Emberback and a fixture world)', () => {
    const emberback = loadWorld(join(__dirname, '..', '..', 'worlds', 'emberback', 'WORLD.md'));
    expect(Object.fromEntries(emberback.lorebook.map((e) => [e.id, e.extra.scanDepth]))).toEqual({ 'ember-wardens': 2, 'ash-river': 0, 'the-vents': 2 });
    const quillhold = loadWorld(join(WORLDS, 'quillhold', 'WORLD.md'));
    expect(quillhold.lorebook.map((e) => e.extra.scanDepth)).toEqual([0, 2, 3]);
    expect(quillhold.tags).toEqual(['test', 'lorebook']);
    expect(quillhold.characters[0].aliases).toEqual(['the Scribe']);
  });

  it('a keyword only in committed history fires an entry within its scan depth, and not beyond it', async () => {
    const covel = await startEmbedded({ COVEL_WORLDS_DIR: WORLDS });
    try {
      const client = await covel.newTenant();
      const { id } = await client.createSession({ worldId: 'quillhold' });
      const turnIds: string[] = [];
      // turn 1 names the quill (the emulated story repeats the input); turns 2 and 3 do not
      for (const text of ['I pick up the quill', 'Walk to the window', 'Wait']) {
        const { executionId, turnId } = await client.submit(id, text);
        await client.waitFor(executionId, 20_000);
        turnIds.push(turnId);
      }
      const messages = await client.messages(id);
      expect(messages.map((m) => /quill/i.test(m.text))).toEqual([true, true, false, false, false, false]);

      // trace_events is an async projection: wait until it has the session's last event
      expect(await covel.engine.projector.waitFor({ projection: 'trace_events', streamId: id, timeoutMs: 10_000 })).toEqual({ status: 'reached' });
      const calls = await covel.engine.readModels.recordedCalls(id);
      const fired = calls.map((c) => ['LORE-NOW', 'LORE-TWO', 'LORE-THREE'].filter((tag) => JSON.stringify(c.body).includes(tag)));
      expect(fired).toEqual([
        ['LORE-NOW', 'LORE-TWO', 'LORE-THREE'], // turn 1: in the player input
        ['LORE-TWO', 'LORE-THREE'], // turn 2: the last 2 committed messages hold "quill"
        ['LORE-THREE'], // turn 3: "quill" is 3 messages back: beyond depth 2, within depth 3
      ]);
      for (const turnId of turnIds) {
        const audit = await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId);
        expect(audit.identical).toBe(true);
      }
    } finally {
      await covel.stop();
    }
  }, 60_000);
});

describe('§4 lorebook scan range: compacted messages are scanned too', () => {
  /** The compaction fixture's summary model answers without naming the quill; every other call gets the emulator's own reply. */
  const script = (call: ScriptedCall): Reply | undefined =>
    (call.transcript[0]?.content ?? '').startsWith('Summarize the story so far') ? { kind: 'text', text: 'The copyist worked through the hall.' } : undefined;
  const filler = 'I copy another page at the long desk and blot the ink. '.repeat(30);

  it('a keyword that is only in compacted messages fires an entry whose scan depth reaches them; the audit rebuilds those turns', async () => {
    // the teller (shared history: it compacts) and the fixture compactor (keeps the last four messages) on 4k windows
    const h = await turnHarness({
      pluginsDir: join(__dirname, '..', 'fixtures', 'compaction-plugins'),
      pluginFilter: (p) => ['teller', 'compactor'].includes(p.manifest.id),
      script,
      handlers: (deps) => new TurnRunner(deps),
    });
    try {
      const small = llmToml({ story: { contextWindow: 4096, maxOutputTokens: 512 }, fast: { contextWindow: 4096, maxOutputTokens: 512 } });
      h.deps.providers = new ProviderRegistry(parseLlmConfig(small), (protocol) => endpointFor(protocol, {}, h.emulator.url));
      h.deps.worlds = new WorldCatalog(WORLDS);
      const session = { tenantId: randomUUID(), sessionId: randomUUID() };
      await h.deps.store.append({
        ...session,
        streamId: session.sessionId,
        expectedVersion: 0,
        events: [{ type: 'session.created@1', data: { sessionId: session.sessionId, worldId: 'inkwell', locale: 'en' } }],
      });
      const calls: { turnId: string; body: string }[] = [];
      // turn 1 names the quill (the emulated story repeats it); the later turns never do
      for (const text of ['I pick up the quill.', ...Array.from({ length: 7 }, (_, i) => `Page ${i + 2}.`)]) {
        const job = await h.input(session, `${text} ${filler}`);
        await h.queue.enqueue(job);
        const status = async () => (await h.deps.readModels.execution(job.tenantId, job.executionId))?.status ?? '';
        await eventually(async () => ['committed', 'failed'].includes(await status()), 'the turn ended');
        expect(await status()).toBe('committed');
        const events = await h.events(session.sessionId);
        const call = events.find((e) => e.type === 'llm.calling@1' && e.data.executionId === job.executionId)!.data as { body: string };
        calls.push({ turnId: job.turnId, body: call.body });
      }
      // the turns whose request has only the summary of turn 1: the quill is in no message sent, yet the entry fires
      const afterCompaction = calls.filter((c) => c.body.includes('<compacted_history>'));
      expect(afterCompaction.length).toBeGreaterThanOrEqual(2);
      for (const c of afterCompaction) {
        expect(c.body.toLowerCase()).not.toContain('quill');
        expect(c.body).toContain('LORE-DEEP');
      }
      // and the turns before compaction fired it from uncompacted history, as always
      expect(calls.every((c) => c.body.includes('LORE-DEEP'))).toBe(true);
      for (const { turnId } of afterCompaction)
        expect((await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, turnId)).identical).toBe(true);
    } finally {
      await h.close();
    }
  }, 120_000);
});

describe('strict world files: an unknown key names the file and the path, and stops start-up', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  function worldsDir(worlds: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'covel-worlds-'));
    dirs.push(dir);
    for (const [worldId, frontMatter] of Object.entries(worlds)) {
      mkdirSync(join(dir, worldId));
      writeFileSync(join(dir, worldId, 'WORLD.md'), `---\n${frontMatter}\n---\nLore.`);
    }
    return dir;
  }
  const entry = (extra: string) => `id: w\nname: W\nlorebook:\n  - id: e\n    keys: [k]\n    content: c\n${extra}`;

  it.each([
    ['a misspelt key under extra', entry('    extra: { scanDeth: 2 }'), 'lorebook.0.extra.scanDeth: unknown key'],
    ['the old top-level scanDepth', entry('    scanDepth: 2'), 'lorebook.0.scanDepth: unknown key'],
    ['a world key', 'id: w\nname: W\nlanguage: en', 'language: unknown key'],
    ['a character key', 'id: w\nname: W\ncharacters:\n  - id: c\n    name: C\n    age: 3', 'characters.0.age: unknown key'],
    ['a depth position key', entry('    position: { depht: 1 }'), 'lorebook.0.position'],
    ['a scan depth over 20', entry('    extra: { scanDepth: 21 }'), 'lorebook.0.extra.scanDepth: Too big'],
  ])('%s', (_name, frontMatter, expected) => {
    const file = join(worldsDir({ w: frontMatter }), 'w', 'WORLD.md');
    expect(() => loadWorld(file)).toThrow(PluginManifestError);
    expect(() => loadWorld(file)).toThrow(`${file}: ${expected}`);
  });

  it('the engine refuses to start with a bad world file', async () => {
    const worlds = worldsDir({ good: 'id: good\nname: Good', bad: entry('    extra: { scanDeth: 2 }') });
    const data = mkdtempSync(join(tmpdir(), 'covel-data-'));
    dirs.push(data);
    const started = startEmbedded({ COVEL_WORLDS_DIR: worlds }, data);
    started.then((covel) => covel.stop()).catch(() => undefined); // never leave a running engine behind
    await expect(started).rejects.toThrow(`${join(worlds, 'bad', 'WORLD.md')}: lorebook.0.extra.scanDeth: unknown key`);
  });
});
