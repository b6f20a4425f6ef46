import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type LoadedPlugin, loadPlugins, PluginManifestError } from '../../../plugins-sdk';
import type { RuntimeOutput } from '../../journal/journal';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';
import { conditionHolds } from '../runtime-condition';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function load(files: Record<string, string>): LoadedPlugin[] {
  const dir = mkdtempSync(join(tmpdir(), 'covel-when-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return loadPlugins(dir);
}

const files = (when: string, gateStage = 'pre-turn', gateType = 'function') => ({
  'keeper/PLUGIN.md': '---\nid: keeper\nname: keeper\nversion: "1"\n---\nkeeper.',
  'keeper/runtimes/gate/RUNTIME.md': `---\nid: gate\ntype: ${gateType}\nschedule: { stage: ${gateStage} }\n---\ngate.`,
  'keeper/runtimes/tally/RUNTIME.md': `---\nid: tally\nschedule:\n  stage: post-turn\n  when: ${when}\n---\ntally.`,
});

const output = (text: string, outputKind: RuntimeOutput['outputKind'] = 'none', runtimeId = 'gate'): RuntimeOutput => ({
  stage: 'pre-turn',
  pluginId: 'keeper',
  runtimeId,
  outputKind,
  messageId: 'm',
  text,
  attempt: 1,
  midTurnBefore: 0,
});

describe('schedule.when (a runtime runs only when an earlier runtime says so)', () => {
  it('the manifest refuses a malformed condition', () => {
    expect(() => load(files('{ runtime: gate }'))).toThrow(/schedule\.when\.runtime/);
    expect(() => load(files('{ runtime: keeper/gate, select: nope }'))).toThrow(/schedule\.when\.select/);
  });

  it('the catalog refuses a runtime that is not loaded, or not in an earlier stage', () => {
    expect(() => new RuntimeCatalog(load(files('{ runtime: keeper/nobody }')))).toThrow(PluginManifestError);
    expect(() => new RuntimeCatalog(load(files('{ runtime: keeper/nobody }')))).toThrow(/tally runs when "keeper\/nobody" says so, which is not a runtime/);
    expect(() => new RuntimeCatalog(load(files('{ runtime: keeper/gate }', 'post-turn')))).toThrow(/which is not in an earlier stage/);
  });

  it('holds when the output at the pointer is truthy (a function’s output read as JSON); not otherwise', () => {
    const catalog = new RuntimeCatalog(load(files('{ runtime: keeper/gate, select: /track }')));
    const when = catalog.find('keeper', 'tally')!.manifest.schedule.when;
    expect(conditionHolds(catalog, when, [output('{"track":true}')])).toBe(true);
    expect(conditionHolds(catalog, when, [output('{"track":["a"]}')])).toBe(true);
    for (const text of ['{"track":false}', '{"track":0}', '{"track":""}', '{"track":[]}', '{"track":{}}', '{"track":null}', '{}', 'not json'])
      expect(conditionHolds(catalog, when, [output(text)])).toBe(false);
    expect(conditionHolds(catalog, when, [])).toBe(false); // no output of the gate
    expect(conditionHolds(catalog, undefined, [])).toBe(true); // no condition: always runs
  });

  it('an agent’s text output is read as text (a structured one as JSON)', () => {
    const catalog = new RuntimeCatalog(load(files('{ runtime: keeper/gate }', 'pre-turn', 'agent')));
    const when = catalog.find('keeper', 'tally')!.manifest.schedule.when;
    expect(conditionHolds(catalog, when, [output('yes', 'story')])).toBe(true);
    expect(conditionHolds(catalog, when, [output('', 'story')])).toBe(false);
    expect(conditionHolds(catalog, when, [output('false', 'structured')])).toBe(false);
  });
});
