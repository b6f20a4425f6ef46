import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startEmbedded } from '../support/embedded';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

describe('prefix report and turn audit: API and commands', () => {
  it('GET prefix-report and audit, then npm run prompt:prefix and npm run audit on the same data', async () => {
    const covel = await startEmbedded({}, undefined, { onDisk: true });
    let sessionId = '';
    const turnIds: string[] = [];
    try {
      const client = await covel.newTenant();
      await expect(client.createSession({ worldId: 'atlantis' })).rejects.toThrow(/404 .*world "atlantis" not found/);
      ({ id: sessionId } = await client.createSession({ worldId: 'emberback', plugins: ['narrator', 'history-compaction'] }));
      for (const text of ['Walk to the river', 'Ask Mira about the ferry', 'Watch the vents']) {
        const r = await client.submit(sessionId, text);
        await client.waitFor(r.executionId, 20_000);
        turnIds.push(r.turnId);
      }
      type Row = {
        turn: number;
        runtime: string;
        sharedPercent: number | null;
        requestTokensEstimate: number;
        providerCachedTokens: number | null;
        firstDifference: { section: string } | null;
      };
      const report = await client.request<Row[]>('GET', `/v1/sessions/${sessionId}/prefix-report`);
      expect(report.map((r) => [r.turn, r.runtime])).toEqual([
        [1, 'narrator/narrator'],
        [2, 'narrator/narrator'],
        [3, 'narrator/narrator'],
      ]);
      expect(report[0].sharedPercent).toBeNull();
      // the history up to the previous turn is shared; the previous turn's turn context (the character
      // sheets, new each turn by design: spec §4 "Writing that keeps the system prompt unchanged") is not
      expect(report[2].sharedPercent).toBeGreaterThan(75);
      expect(report[2].firstDifference?.section).toBe('history');
      expect(report.every((r) => r.providerCachedTokens !== null)).toBe(true);

      type Audit = { identical: boolean; calls: { identical: boolean; sources: { section: string; source: string; items?: string[] }[] }[] };
      const audit = await client.request<Audit>('GET', `/v1/sessions/${sessionId}/turns/${turnIds[1]}/audit`);
      expect(audit.identical).toBe(true);
      const sections = audit.calls[0].sources.map((s) => s.section);
      expect(sections).toEqual(expect.arrayContaining(['preamble', 'runtime-body', 'segments', 'worldinfo-before', 'history', 'player-input', 'depth']));
      expect(audit.calls[0].sources.find((s) => s.section === 'segments')!.items).toEqual(['narrator/narrative-style']);
      expect(audit.calls[0].sources.find((s) => s.section === 'worldinfo-before')!.items).toEqual(['world-lore: constant', 'world-characters: constant']);
      // turn 2 was "Ask Mira about the ferry": the ash-river entry fired on a keyword in the input
      expect(audit.calls[0].sources.find((s) => s.section === 'depth')!.items).toContain('ash-river: keyword "ferry" in the player input');
      await expect(client.request('GET', `/v1/sessions/${sessionId}/turns/nope/audit`)).rejects.toThrow(/404/);
      const other = await covel.newTenant('other');
      await expect(other.request('GET', `/v1/sessions/${sessionId}/prefix-report`)).rejects.toThrow(/404/);
      // the inspector's views are the tenant's alone
      await expect(other.request('GET', `/v1/sessions/${sessionId}/turns`)).rejects.toThrow(/404/);
      await expect(other.request('GET', `/v1/sessions/${sessionId}/turns/${turnIds[1]}/calls`)).rejects.toThrow(/404/);
      expect(await other.request('GET', '/v1/sessions')).toEqual([]);
      const calls = await client.request<{ comparison: { firstDifference: { section: string } | null } | null }[]>(
        'GET',
        `/v1/sessions/${sessionId}/turns/${turnIds[2]}/calls`,
      );
      // the same comparison as the prefix report's
      expect(calls[0].comparison?.firstDifference?.section).toBe(report[2].firstDifference?.section);
    } finally {
      await covel.stop({ keepData: true });
    }
    const env = { ...process.env, DATABASE_URL: '', REDIS_URL: '', COVEL_DATA_DIR: covel.dataDir };
    const table = await run('npm', ['run', '--silent', 'prompt:prefix', '--', covel.dataDir, '--show', 'narrator/narrator'], { cwd: root, env });
    expect(table.stdout).toMatch(new RegExp(`session ${sessionId}`));
    expect(table.stdout).toMatch(/turn\s+runtime\s+req tok\s+shared\s+shared %/);
    expect(table.stdout).toMatch(/estimates from characters/);
    expect(table.stdout).toMatch(/before: /);
    const json = JSON.parse(
      (await run('npm', ['run', '--silent', 'prompt:prefix', '--', join(covel.dataDir, 'pglite'), '--json', '--session', sessionId], { cwd: root, env }))
        .stdout,
    );
    expect(json.rows).toHaveLength(3);
    const audit = await run('npm', ['run', '--silent', 'audit', '--', sessionId, turnIds[2]], { cwd: root, env });
    expect(audit.stdout).toMatch(/every request is byte-identical/);
    await expect(run('npm', ['run', '--silent', 'prompt:prefix', '--', '/nonexistent'], { cwd: root, env })).rejects.toMatchObject({
      stderr: expect.stringMatching(/not a postgres:\/\/ URL/),
    });
  }, 120_000);
});
