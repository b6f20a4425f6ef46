import type { Reply, ScriptedCall } from '../emulator';
import { promptCacheKey } from '../engine';
import type { LoadedPlugin } from '../plugins-sdk';
import type { ErrorIssue } from '../errors';
import { HarnessOptionsError } from './errors';
import type { ScriptedReply } from './options';

/** The key of the replies for every runtime without its own. */
export const DEFAULT_REPLY_KEY = 'default';

/** One scripted reply per call: a list is used up in order, a single reply answers every call. */
class ReplyQueue {
  private next = 0;
  constructor(private readonly replies: ScriptedReply | readonly ScriptedReply[]) {}

  take(): ScriptedReply | undefined {
    if (!Array.isArray(this.replies)) return this.replies as ScriptedReply;
    return this.next < this.replies.length ? (this.replies[this.next++] as ScriptedReply) : undefined;
  }
}

function toReply(reply: ScriptedReply): Reply {
  if (typeof reply === 'string') return { kind: 'text', text: reply };
  if ('text' in reply) return { kind: 'text', text: reply.text };
  if ('json' in reply) return { kind: 'text', text: JSON.stringify(reply.json) };
  return { kind: 'tool', name: reply.tool, args: reply.args ?? {} };
}

/**
 * The emulator's script: which runtime a call is for comes from its `prompt_cache_key`, which the
 * engine derives from the session and the runtime (`promptCacheKey`); the harness knows both, so
 * it maps each key of its sessions back to `<plugin-id>/<runtime-id>`. A call that carries no key
 * (the Anthropic and Gemini protocols) gets the `default` replies.
 */
export class ScriptedReplies {
  private readonly queues = new Map<string, ReplyQueue>();
  private readonly runtimeOfKey = new Map<string, string>();
  /** Calls answered per runtime (`default` for calls it could not place), in order. */
  readonly answered: { runtime: string; scripted: boolean }[] = [];

  private readonly runtimes: readonly { pluginId: string; runtimeId: string; fullId: string; type: 'agent' | 'function' }[];

  /** Checks every key names a loaded agent runtime (or is `default`), before anything starts. */
  constructor(replies: Readonly<Record<string, ScriptedReply | readonly ScriptedReply[]>>, plugins: readonly LoadedPlugin[]) {
    this.runtimes = plugins.flatMap((p) => p.runtimes.map((r) => ({ pluginId: p.manifest.id, runtimeId: r.id, fullId: r.fullId, type: r.manifest.type })));
    const known = new Set(this.runtimes.map((r) => r.fullId));
    const issues: ErrorIssue[] = [];
    for (const [key, value] of Object.entries(replies)) {
      const runtime = this.runtimes.find((r) => r.fullId === key);
      if (key !== DEFAULT_REPLY_KEY && !runtime) {
        const list = [...known].sort().join(', ') || 'none';
        issues.push({
          path: `replies[${JSON.stringify(key)}]`,
          message: `no runtime "${key}" among the loaded plugins (runtimes: ${list}; or "${DEFAULT_REPLY_KEY}")`,
        });
      } else if (runtime?.type === 'function') {
        issues.push({ path: `replies[${JSON.stringify(key)}]`, message: `"${key}" is a function runtime: it calls no model` });
      } else this.queues.set(key, new ReplyQueue(value));
    }
    if (issues.length > 0) throw new HarnessOptionsError(issues);
  }

  /** Learns the cache keys of a new session's runtimes. */
  addSession(sessionId: string): void {
    for (const r of this.runtimes) this.runtimeOfKey.set(promptCacheKey(sessionId, r.pluginId, r.runtimeId), r.fullId);
  }

  /** The emulator's `script` option. */
  readonly script = (call: ScriptedCall): Reply | undefined => {
    const runtime = (call.cacheKey !== null ? this.runtimeOfKey.get(call.cacheKey) : undefined) ?? DEFAULT_REPLY_KEY;
    const reply = this.queues.get(runtime)?.take() ?? (runtime === DEFAULT_REPLY_KEY ? undefined : this.queues.get(DEFAULT_REPLY_KEY)?.take());
    this.answered.push({ runtime, scripted: reply !== undefined });
    return reply === undefined ? undefined : toReply(reply);
  };
}
