import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/**
 * Summarises V8 .cpuprofile files (`node --cpu-prof`, e.g. the bench:load processes with
 * COVEL_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=<dir>"): busy time over a window of each profile,
 * the top functions by self time and by inclusive time (the repository's own code), and self time by
 * module (node_modules/<package>, libs/<lib>, apps/<app>, node internals, GC).
 *
 *   node -r ./tools/register.js bench/cpu-profile-summary.ts [--from-ms N] [--to-ms N] [--cap-ms N] [--top N] [--timeline] <file>...
 *
 * --from-ms / --to-ms: the window, in ms from each profile's start (e.g. leave the start-up out);
 * --from-first <regex>: --from-ms and --to-ms count from the first sample with a frame matching it on
 * its stack (e.g. the first job: the start-up before it is left out);
 * --cap-ms N (default 2): the most one sample counts (the sampling interval is about 1 ms; a longer gap
 * is time the process spent waiting for a core, which the machine's other load decides);
 * --timeline: busy ms per second of each profile, to see where start-up ends;
 * --callers <regex>: where the time of the frames matching it (by self time) comes from (--own: the
 * nearest frames of the repository's code); --tree <percent>: the repository's frames top-down, those
 * with at least that share of the busy time.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const IDLE = new Set(['(idle)', '(root)']);

/** The module a frame belongs to: node_modules/<package>, libs/<lib>, apps/<app>, node:internal… */
export function moduleOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `node_modules/${pkg[1]}`;
  const own = /\/(libs|apps|bench|tools|plugins|test)\/([^/]+)/.exec(url);
  if (own) return `${own[1]}/${own[2].replace(/\.[jt]s$/, '')}`;
  if (url.startsWith('node:')) return url.startsWith('node:internal') ? 'node:internal' : url;
  return url;
}

function shortUrl(url: string): string {
  const pkg = /node_modules\/(.*)$/.exec(url);
  if (pkg) return pkg[1];
  const own = /\/((?:libs|apps|bench|tools|plugins)\/.*)$/.exec(url);
  return own ? own[1] : url;
}

const frameKey = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
const isOwnCode = (f: CallFrame) => /\/(libs|apps|plugins)\//.test(f.url) && !f.url.includes('node_modules');

interface Summary {
  busyMs: number;
  gcMs: number;
  selfByFunction: Map<string, number>;
  selfByModule: Map<string, number>;
  inclusiveOwn: Map<string, number>;
  timeline: number[];
  /** With `callersOf`: self time of the matching frames by their nearest callers outside node internals. */
  callers: Map<string, number>;
  /** Inclusive time down the chains of the repository's frames only (other frames skipped), root first. */
  ownTree: TreeNode;
}

interface TreeNode {
  ms: number;
  children: Map<string, TreeNode>;
}

const treeNode = (): TreeNode => ({ ms: 0, children: new Map() });

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

export function summarise(
  profiles: readonly CpuProfile[],
  window: { fromMs: number; toMs: number; capMs: number; fromFirst?: RegExp; callersOf?: RegExp; ownCallers?: boolean },
): Summary {
  const s: Summary = {
    busyMs: 0,
    gcMs: 0,
    selfByFunction: new Map(),
    selfByModule: new Map(),
    inclusiveOwn: new Map(),
    timeline: [],
    callers: new Map(),
    ownTree: treeNode(),
  };
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const origin = window.fromFirst ? firstSampleMs(profile, byId, parent, window.fromFirst) : 0;
    let t = -origin;
    for (let i = 0; i < profile.samples.length; i++) {
      // a sample's delta is the time since the previous one: it is charged to this sample's frame, at
      // most capMs (a longer gap is the process waiting for a core on a busy machine, not running)
      const gapMs = profile.timeDeltas[i] / 1000;
      t += gapMs;
      const deltaMs = Math.min(gapMs, window.capMs);
      const node = byId.get(profile.samples[i])!;
      if (IDLE.has(node.callFrame.functionName)) continue;
      const second = Math.floor((t + origin) / 1000);
      s.timeline[second] = (s.timeline[second] ?? 0) + deltaMs;
      if (t < window.fromMs || t > window.toMs) continue;
      s.busyMs += deltaMs;
      if (node.callFrame.functionName === '(garbage collector)') s.gcMs += deltaMs;
      add(s.selfByFunction, frameKey(node.callFrame), deltaMs);
      add(s.selfByModule, moduleOf(node.callFrame), deltaMs);
      if (window.callersOf?.test(frameKey(node.callFrame))) {
        const chain: string[] = [];
        for (let id = parent.get(node.id); id !== undefined && chain.length < 3; id = parent.get(id)) {
          const frame = byId.get(id)!.callFrame;
          if (window.ownCallers ? isOwnCode(frame) : frame.url && !frame.url.startsWith('node:')) chain.push(frameKey(frame));
        }
        add(s.callers, chain.join(' < '), deltaMs);
      }
      const ownChain: string[] = [];
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
        const frame = byId.get(id)!.callFrame;
        if (!isOwnCode(frame)) continue;
        const key = frameKey(frame);
        if (ownChain[ownChain.length - 1] !== key) ownChain.push(key);
        if (seen.has(key)) continue;
        seen.add(key);
        add(s.inclusiveOwn, key, deltaMs);
      }
      let at = s.ownTree;
      at.ms += deltaMs;
      for (const key of ownChain.reverse()) {
        let child = at.children.get(key);
        if (!child) at.children.set(key, (child = treeNode()));
        child.ms += deltaMs;
        at = child;
      }
    }
  }
  return s;
}

/** When the first sample with a frame matching `pattern` on its stack was taken, in ms from the profile's start (Infinity: none). */
function firstSampleMs(profile: CpuProfile, byId: Map<number, ProfileNode>, parent: Map<number, number>, pattern: RegExp): number {
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] / 1000;
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      if (pattern.test(frameKey(byId.get(id)!.callFrame))) return t;
    }
  }
  return Infinity;
}

function top(m: Map<string, number>, n: number, total: number): string {
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, ms]) => `${ms.toFixed(1).padStart(9)} ms ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${k}`)
    .join('\n');
}

function printTree(node: TreeNode, total: number, minShare: number, depth = 0, lines: string[] = []): string[] {
  for (const [key, child] of [...node.children.entries()].sort((a, b) => b[1].ms - a[1].ms)) {
    if (child.ms / total < minShare) break;
    lines.push(`${child.ms.toFixed(1).padStart(9)} ms ${((100 * child.ms) / total).toFixed(1).padStart(5)} %  ${'  '.repeat(depth)}${key}`);
    printTree(child, total, minShare, depth + 1, lines);
  }
  return lines;
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'from-ms': { type: 'string' },
      'to-ms': { type: 'string' },
      top: { type: 'string' },
      timeline: { type: 'boolean' },
      callers: { type: 'string' },
      own: { type: 'boolean' },
      tree: { type: 'string' },
      'cap-ms': { type: 'string' },
      'from-first': { type: 'string' },
    },
  });
  const n = Number(values.top ?? 15);
  const window = { fromMs: Number(values['from-ms'] ?? 0), toMs: Number(values['to-ms'] ?? Infinity), capMs: Number(values['cap-ms'] ?? 2) };
  const profiles = positionals.map((file) => JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  const callersOf = values.callers ? new RegExp(values.callers) : undefined;
  const s = summarise(profiles, {
    ...window,
    callersOf,
    ownCallers: values.own,
    ...(values['from-first'] ? { fromFirst: new RegExp(values['from-first']) } : {}),
  });
  if (values.timeline) console.log(`busy ms per second:\n${s.timeline.map((ms, i) => `${i}s ${(ms ?? 0).toFixed(0)}`).join('  ')}\n`);
  console.log(`${positionals.length} profile(s), window ${window.fromMs}..${window.toMs} ms: busy ${s.busyMs.toFixed(0)} ms (GC ${s.gcMs.toFixed(0)} ms)\n`);
  console.log(`top ${n} by self time:\n${top(s.selfByFunction, n, s.busyMs)}\n`);
  console.log(`self time by module:\n${top(s.selfByModule, n * 2, s.busyMs)}\n`);
  console.log(`top ${n * 2} of the repository's functions by inclusive time:\n${top(s.inclusiveOwn, n * 2, s.busyMs)}`);
  if (values.tree)
    console.log(`\nthe repository's frames, top-down (at least ${values.tree} %):\n${printTree(s.ownTree, s.busyMs, Number(values.tree) / 100).join('\n')}`);
  if (callersOf) console.log(`\ncallers of ${callersOf.source}:\n${top(s.callers, n * 2, s.busyMs)}`);
}

if (require.main === module) main();
