import { parsePluginFile, parseRuntimeFile, PluginManifestError } from '..';

/** The message a PLUGIN.md (or RUNTIME.md) with this front matter fails with, or null. */
function errorOf(parse: (text: string, file: string) => unknown, yaml: string, file: string): string | null {
  try {
    parse(`---\n${yaml}\n---\nBody.`, file);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(PluginManifestError);
    return (error as PluginManifestError).message;
  }
}
const head = 'id: p\nname: P\nversion: "1"';
const pluginError = (yaml: string) => errorOf(parsePluginFile, `${head}\n${yaml}`, 'plugins/p/PLUGIN.md');
const runtimeError = (yaml: string) => errorOf(parseRuntimeFile, yaml, 'plugins/p/runtimes/r/RUNTIME.md');

describe('plugin manifest (PLUGIN.md front matter)', () => {
  it('fills the defaults: no inline runtime, empty contributions, no entry', () => {
    const { manifest, body } = parsePluginFile(`---\n${head}\n---\nBody.`);
    expect(body).toBe('Body.');
    expect(manifest).toEqual({
      id: 'p',
      name: 'P',
      version: '1',
      enabledByDefault: true,
      contributes: { prompt: [], extensions: [], tools: [], settings: [], events: [] },
    });
  });

  it('the old runtimes: array is an unknown key', () => {
    expect(pluginError('runtimes:\n  - id: r')).toBe('plugins/p/PLUGIN.md: runtimes: unknown key');
  });

  it('contributes.extensions: a known point, ids unique per point', () => {
    const ok = parsePluginFile(
      `---\n${head}\ncontributes:\n  extensions:\n    - { point: prompt.segment@1, id: status }\n    - { point: history.compact@2, id: status }\n---\n`,
    );
    expect(ok.manifest.contributes.extensions).toEqual([
      { point: 'prompt.segment@1', id: 'status' },
      { point: 'history.compact@2', id: 'status' },
    ]);
    expect(pluginError('contributes:\n  extensions:\n    - { point: prompt.segment@2, id: a }')).toMatch(
      /^plugins\/p\/PLUGIN\.md: contributes\.extensions\.0\.point: /,
    );
    expect(pluginError('contributes:\n  extensions:\n    - { point: prompt.segment@1, id: a }\n    - { point: prompt.segment@1, id: a }')).toBe(
      'plugins/p/PLUGIN.md: contributes.extensions.1.id: duplicate extension id for this point "a"',
    );
  });

  it('contributes.tools: parameters are a JSON schema of type object; names unique', () => {
    const tool = (params: string) => `contributes:\n  tools:\n    - name: set-status\n      description: Sets it.\n      parameters: ${params}`;
    expect(pluginError(tool('{ type: object, properties: { mood: { type: string } } }'))).toBeNull();
    expect(pluginError(tool('{ type: string }'))).toBe(
      'plugins/p/PLUGIN.md: contributes.tools.0.parameters: tool parameters are a JSON schema with type: object',
    );
    expect(pluginError(tool('[1]'))).toMatch(/^plugins\/p\/PLUGIN\.md: contributes\.tools\.0\.parameters: /);
    expect(
      pluginError(
        'contributes:\n  tools:\n    - { name: t, description: d, parameters: { type: object } }\n    - { name: t, description: e, parameters: { type: object } }',
      ),
    ).toBe('plugins/p/PLUGIN.md: contributes.tools.1.name: duplicate tool name "t"');
  });

  it('contributes.tools and events: a key that is not a JSON Schema keyword (a YAML comma slip) is refused with its path', () => {
    const tool = (params: string) => `contributes:\n  tools:\n    - name: note\n      description: Notes it.\n      parameters: ${params}`;
    // unquoted, the comma splits the flow mapping: "two" becomes a key of the property's schema
    expect(pluginError(tool('{ type: object, properties: { text: { type: string, description: one, two } } }'))).toBe(
      'plugins/p/PLUGIN.md: contributes.tools.0.parameters.properties.text.two: "two" is not a JSON Schema keyword (in YAML flow style, quote a text with a comma: description: "a, b")',
    );
    expect(pluginError(tool('{ type: object, properties: { text: { type: string, description: "one, two" } } }'))).toBeNull();
    // nested schemas are walked (items, anyOf lists, additionalProperties); property names and x- keys are free
    expect(pluginError(tool('{ type: object, properties: { list: { type: array, items: { anyOf: [{ type: string }, { typo: 1 }] } } } }'))).toMatch(
      /contributes\.tools\.0\.parameters\.properties\.list\.items\.anyOf\.1\.typo: "typo" is not a JSON Schema keyword/,
    );
    expect(
      pluginError(
        tool('{ type: object, x-ui: wide, properties: { type: { type: string }, required: { type: boolean } }, additionalProperties: { type: number } }'),
      ),
    ).toBeNull();
    expect(
      pluginError(
        'contributes:\n  events:\n    - { topic: a.b, description: d, payload: { type: object, properties: { x: { type: string, minLenght: 1 } } } }',
      ),
    ).toMatch(/contributes\.events\.0\.payload\.properties\.x\.minLenght: "minLenght" is not a JSON Schema keyword/);
  });

  it('contributes.settings: the default matches the type; an enum default is one of its values', () => {
    const settings = (item: string) => `contributes:\n  settings:\n    - ${item}`;
    expect(pluginError(settings('{ key: verbosity, type: number, default: 2, label: Verbosity }'))).toBeNull();
    expect(pluginError(settings('{ key: tone, type: enum, values: [dry, warm], default: warm }'))).toBeNull();
    expect(pluginError(settings('{ key: on, type: boolean, default: true }'))).toBeNull();
    expect(pluginError(settings('{ key: name, type: string, default: "" }'))).toBeNull();
    expect(pluginError(settings('{ key: verbosity, type: number, default: "2" }'))).toMatch(/^plugins\/p\/PLUGIN\.md: contributes\.settings\.0\.default: /);
    expect(pluginError(settings('{ key: on, type: boolean, default: yes please }'))).toMatch(/contributes\.settings\.0\.default: /);
    expect(pluginError(settings('{ key: tone, type: enum, values: [dry, warm], default: loud }'))).toBe(
      'plugins/p/PLUGIN.md: contributes.settings.0.default: default "loud" is not one of values',
    );
    expect(pluginError(settings('{ key: x, type: date, default: 1 }'))).toMatch(/contributes\.settings\.0\.type: /);
    expect(pluginError(settings('{ key: "a.b", type: string, default: x }'))).toMatch(/contributes\.settings\.0\.key: a setting key/);
    expect(pluginError('contributes:\n  settings:\n    - { key: k, type: string, default: a }\n    - { key: k, type: number, default: 1 }')).toBe(
      'plugins/p/PLUGIN.md: contributes.settings.1.key: duplicate setting key "k"',
    );
  });

  it('contributes.events: topic, description, payload schema; topics unique', () => {
    const ok = parsePluginFile(
      `---\n${head}\ncontributes:\n  events:\n    - { topic: quest.completed, description: A quest ended., payload: { type: object } }\n---\n`,
    );
    expect(ok.manifest.contributes.events).toEqual([{ topic: 'quest.completed', description: 'A quest ended.', payload: { type: 'object' } }]);
    expect(pluginError('contributes:\n  events:\n    - { topic: quest.completed, description: d }')).toMatch(/contributes\.events\.0\.payload: /);
    expect(pluginError('contributes:\n  events:\n    - { topic: "has space", description: d, payload: {} }')).toMatch(
      /contributes\.events\.0\.topic: an event topic/,
    );
    expect(pluginError('contributes:\n  events:\n    - { topic: t, description: d, payload: {} }\n    - { topic: t, description: e, payload: {} }')).toBe(
      'plugins/p/PLUGIN.md: contributes.events.1.topic: duplicate event topic "t"',
    );
  });

  it('an inline runtime: errors under runtime.*; its id is optional', () => {
    const { manifest } = parsePluginFile(`---\n${head}\nruntime:\n  outputKind: story\n---\nBody.`);
    expect(manifest.runtime).toMatchObject({ type: 'agent', outputKind: 'story', schedule: { trigger: 'auto' } });
    expect(manifest.runtime?.id).toBeUndefined();
    expect(pluginError('runtime:\n  stage: narrative')).toBe('plugins/p/PLUGIN.md: runtime.stage: unknown key');
    expect(pluginError('runtime:\n  contract: narrative-engine@2')).toBe('plugins/p/PLUGIN.md: runtime.contract: unknown key');
    expect(pluginError('runtime:\n  stream: true')).toBe('plugins/p/PLUGIN.md: runtime.stream: unknown key');
    expect(pluginError('runtime:\n  slot: story')).toBe('plugins/p/PLUGIN.md: runtime.slot: unknown key');
  });
});

describe('runtime manifest (RUNTIME.md front matter or inline runtime:)', () => {
  it('fills the defaults of an agent runtime', () => {
    const { manifest, body } = parseRuntimeFile('---\nid: r\n---\nOwn body.');
    expect(body).toBe('Own body.');
    expect(manifest).toEqual({
      id: 'r',
      type: 'agent',
      schedule: { trigger: 'auto' },
      outputKind: 'none',
      output: {},
      io: { inputs: {}, selfData: [], exports: {} },
      agent: { slot: 'story', tools: [], requireToolUse: false, advertiseEvents: false, history: {}, loop: {} },
    });
  });

  it('reads every field of the author contract', () => {
    const { manifest } = parseRuntimeFile(`---
id: keeper
type: agent
schedule: { stage: post-turn, trigger: { event: quest.completed } }
outputKind: structured
output:
  contract: facts@1
  schema: { type: object, properties: { facts: { type: array } } }
io:
  inputs:
    story: { from: { runtime: narrator/narrator }, cardinality: one, select: /text }
    facts: { from: { contract: facts@1 }, cardinality: many }
  selfData: [status, { namespace: log, limit: 10 }]
  exports:
    open-threads: { select: /threads, to: story }
    facts: { to: { contract: narrative-engine@2 } }
agent:
  slot: fast
  tools: [set-status]
  toolChoice: required
  reasoning: false
  requireToolUse: true
  advertiseEvents: true
  history: { maxTurns: 2, includeSummaries: false }
  loop: { maxSteps: 4, timeoutMs: 30000 }
finalizer: { maxSteps: 1 }
---
Body.`);
    expect(manifest).toEqual({
      id: 'keeper',
      type: 'agent',
      schedule: { stage: 'post-turn', trigger: { event: 'quest.completed' } },
      outputKind: 'structured',
      output: { contract: 'facts@1', schema: { type: 'object', properties: { facts: { type: 'array' } } } },
      io: {
        inputs: {
          story: { from: { runtime: 'narrator/narrator' }, cardinality: 'one', select: '/text' },
          facts: { from: { contract: 'facts@1' }, cardinality: 'many' },
        },
        selfData: [{ namespace: 'status' }, { namespace: 'log', limit: 10 }],
        exports: { 'open-threads': { select: '/threads', to: 'story' }, facts: { to: { contract: 'narrative-engine@2' } } },
      },
      agent: {
        slot: 'fast',
        tools: ['set-status'],
        toolChoice: 'required',
        reasoning: false,
        requireToolUse: true,
        advertiseEvents: true,
        history: { maxTurns: 2, includeSummaries: false },
        loop: { maxSteps: 4, timeoutMs: 30000 },
      },
      finalizer: { maxSteps: 1 },
    });
  });

  it('io.exports: a structured runtime only, each with an audience (`to`), a JSON pointer as `select`', () => {
    expect(runtimeError('id: r\noutputKind: none\nio: { exports: { facts: { to: story } } }')).toBe(
      "plugins/p/runtimes/r/RUNTIME.md: io.exports: only a runtime with outputKind: structured exports (its result is JSON); this one's is none",
    );
    expect(runtimeError('id: r\noutputKind: structured\nio: { exports: { facts: { select: /a } } }')).toMatch(/io\.exports\.facts\.to/);
    expect(runtimeError('id: r\noutputKind: structured\nio: { exports: { facts: { to: everyone } } }')).toMatch(/io\.exports\.facts\.to/);
    expect(runtimeError('id: r\noutputKind: structured\nio: { exports: { facts: { to: story, select: threads } } }')).toMatch(
      /io\.exports\.facts\.select: a JSON pointer/,
    );
    expect(runtimeError('id: r\noutputKind: structured\nio: { exports: { "a b": { to: story } } }')).toMatch(/io\.exports\.a b: Invalid key/);
  });

  it('a function runtime has no agent settings and no finalizer', () => {
    expect(parseRuntimeFile('---\nid: f\ntype: function\n---\n').manifest.agent).toBeNull();
    expect(runtimeError('id: f\ntype: function\nagent: { slot: story }')).toBe(
      "plugins/p/runtimes/r/RUNTIME.md: agent: a function runtime has no agent settings (it runs the plugin's api.runFunction handler)",
    );
    expect(runtimeError('id: f\ntype: function\nfinalizer: { maxSteps: 1 }')).toBe(
      'plugins/p/runtimes/r/RUNTIME.md: finalizer: a function runtime has no finalizer (it makes no model calls)',
    );
    expect(runtimeError('id: f\ntype: script')).toMatch(/^plugins\/p\/runtimes\/r\/RUNTIME\.md: type: /);
  });

  it('schedule.trigger: auto, manual or { event }', () => {
    expect(parseRuntimeFile('---\nid: r\nschedule: { trigger: manual }\n---\n').manifest.schedule).toEqual({ trigger: 'manual' });
    expect(runtimeError('id: r\nschedule: { trigger: sometimes }')).toMatch(/^plugins\/p\/runtimes\/r\/RUNTIME\.md: schedule\.trigger: /);
    expect(runtimeError('id: r\nschedule: { trigger: { topic: x } }')).toMatch(/schedule\.trigger/);
    expect(runtimeError('id: r\nschedule: { whenever: always }')).toBe('plugins/p/runtimes/r/RUNTIME.md: schedule.whenever: unknown key');
    // schedule.when is a condition on an earlier runtime's output (libs/engine/turn/test/runtime-condition.test.ts)
    expect(runtimeError('id: r\nschedule: { when: always }')).toMatch(/^plugins\/p\/runtimes\/r\/RUNTIME\.md: schedule\.when: /);
  });

  it('io.inputs: a plugin/runtime or a name@n contract, a cardinality, a JSON pointer', () => {
    const input = (yaml: string) => runtimeError(`id: r\nio:\n  inputs:\n    story: ${yaml}`);
    expect(input('{ from: { runtime: narrator }, cardinality: one }')).toBe(
      'plugins/p/runtimes/r/RUNTIME.md: io.inputs.story.from.runtime: a runtime: <plugin-id>/<runtime-id>',
    );
    expect(input('{ from: { contract: facts }, cardinality: one }')).toMatch(/io\.inputs\.story\.from\.contract: a contract: <name>@<version>/);
    expect(input('{ from: { runtime: a/b }, cardinality: some }')).toMatch(/io\.inputs\.story\.cardinality: /);
    expect(input('{ from: { runtime: a/b }, cardinality: one, select: text }')).toBe(
      'plugins/p/runtimes/r/RUNTIME.md: io.inputs.story.select: a JSON pointer, e.g. /facts/0',
    );
    expect(input('{ from: { runtime: a/b }, cardinality: one, select: "/a~1b/~0" }')).toBeNull();
    expect(input('{ from: { runtime: a/b }, cardinality: one, pick: /x }')).toBe('plugins/p/runtimes/r/RUNTIME.md: io.inputs.story.pick: unknown key');
  });

  it('io.selfData: names or { namespace, limit }, namespaces unique', () => {
    expect(runtimeError('id: r\nio:\n  selfData: [{ namespace: log, limit: 0 }]')).toMatch(/io\.selfData\.0\.limit|io\.selfData\.0: /);
    expect(runtimeError('id: r\nio:\n  selfData: [log, { namespace: log }]')).toBe(
      'plugins/p/runtimes/r/RUNTIME.md: io.selfData.1.namespace: duplicate selfData namespace "log"',
    );
  });

  it('agent: strict at every level', () => {
    expect(runtimeError('id: r\nagent:\n  loop: { maxStep: 3 }')).toBe('plugins/p/runtimes/r/RUNTIME.md: agent.loop.maxStep: unknown key');
    expect(runtimeError('id: r\nagent:\n  history: { maxTurns: -1 }')).toMatch(/^plugins\/p\/runtimes\/r\/RUNTIME\.md: agent\.history\.maxTurns: /);
    expect(runtimeError('id: r\nagent:\n  reasoning: true')).toMatch(/agent\.reasoning: /);
    expect(runtimeError('id: r\nagent:\n  toolChoice: auto')).toMatch(/agent\.toolChoice: /);
    expect(runtimeError('id: R')).toBe('plugins/p/runtimes/r/RUNTIME.md: id: lower-case id: letters, digits, dashes');
    expect(runtimeError('outputKind: story')).toMatch(/^plugins\/p\/runtimes\/r\/RUNTIME\.md: id: /);
  });
});
