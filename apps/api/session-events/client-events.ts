import { toolResultSummary } from '../../../libs/context';
import type { CommittedMessage, StoredEvent } from '../../../libs/events';
import { truncateText } from '../../../libs/text';

/** Longest tool summary a stream event carries, in code points. */
export const TOOL_SUMMARY_MAX = 200;

/** What a client of `GET /v1/sessions/:id/events` gets for one log event (null: not shown). */
export interface ClientEvent {
  type: 'branched' | 'opening' | 'status' | 'call' | 'call-ended' | 'tool' | 'output' | 'committed' | 'failed' | 'cancelled' | 'reverted' | 'edited';
  data: Record<string, unknown>;
}

/**
 * The log event as the stream shows it: a branch's origin (`branched`: its parent and the turn it
 * was branched at, the first event of a branch's stream; the parent's history it starts with is
 * in `GET …/messages`, not replayed as events), the session's opening (`opening`: turn 0's story message,
 * committed when the session was created; no execution), execution status changes (`status`: queued, running),
 * model calls (`call`, `call-ended`), tool activity (`tool`), runtime outputs (`output`), the
 * committed messages (`committed`), failures (`failed`), stops (`cancelled`: with `keepPartial`, the
 * turn's messages as kept, the partial story text among them), and the player's repairs: an undo (`reverted`:
 * the turns that left the history) and an edit (`edited`: a message's new text). Other events (plugin data, compaction,
 * handler results…) are not shown; their positions are simply skipped.
 */
export function clientEvent(event: StoredEvent): ClientEvent | null {
  switch (event.type) {
    case 'session.branched@1': {
      const { parentSessionId, atTurnId } = event.data;
      return { type: 'branched', data: { parentSessionId, atTurnId } };
    }
    case 'session.opened@1': {
      const { turnId, messageId, openingIndex, text } = event.data;
      return { type: 'opening', data: { turnId, messageId, openingIndex, role: 'assistant', outputKind: 'story', text } };
    }
    case 'player-input.submitted@1': {
      const { executionId, turnId, messageId, text } = event.data;
      return { type: 'status', data: { executionId, turnId, status: 'queued', input: { messageId, text } } };
    }
    case 'runtime.activated@1': {
      const { executionId, turnId, kind, pluginId, runtimeId } = event.data;
      return { type: 'status', data: { executionId, turnId, status: 'queued', activation: { kind, pluginId, runtimeId } } };
    }
    case 'execution.started@1': {
      const { executionId, turnId, attempt } = event.data;
      return { type: 'status', data: { executionId, turnId, status: 'running', attempt } };
    }
    case 'llm.calling@1': {
      const { executionId, turnId, callId, pluginId, runtimeId, step, fallback } = event.data;
      return { type: 'call', data: { executionId, turnId, callId, pluginId, runtimeId, step: step ?? 1, ...(fallback ? { fallback } : {}) } };
    }
    case 'llm.responded@1': {
      const { executionId, turnId, callId, pluginId, runtimeId, finishReason } = event.data;
      return { type: 'call-ended', data: { executionId, turnId, callId, pluginId, runtimeId, finishReason } };
    }
    case 'tool.called@1': {
      const { executionId, turnId, pluginId, runtimeId, step, toolCallId, name } = event.data;
      return { type: 'tool', data: { executionId, turnId, pluginId, runtimeId, step, toolCallId, name, phase: 'called' } };
    }
    case 'tool.completed@1': {
      const { executionId, turnId, pluginId, runtimeId, step, toolCallId, name, ok, errorCode, content } = event.data;
      // what the tool did, in the words its result gives (a plugin tool's `summary`), for a client to show
      const summary = ok ? toolResultSummary(content) : undefined;
      return {
        type: 'tool',
        data: {
          executionId,
          turnId,
          pluginId,
          runtimeId,
          step,
          toolCallId,
          name,
          phase: 'completed',
          ok,
          ...(errorCode ? { errorCode } : {}),
          ...(summary ? { summary: truncateText(summary, TOOL_SUMMARY_MAX) } : {}),
        },
      };
    }
    case 'runtime.output.produced@1': {
      const { executionId, turnId, pluginId, runtimeId, outputKind, messageId, text } = event.data;
      return { type: 'output', data: { executionId, turnId, pluginId, runtimeId, outputKind, messageId, text } };
    }
    case 'turn.committed@1': {
      const { executionId, turnId, messages } = event.data;
      return { type: 'committed', data: { executionId, turnId, status: 'committed', messages: messages.map(shownMessage) } };
    }
    case 'execution.cancelled@1': {
      const { executionId, turnId, keepPartial, messages, by } = event.data;
      return {
        type: 'cancelled',
        data: { executionId, turnId, status: 'cancelled', keepPartial, by, ...(messages ? { messages: messages.map(shownMessage) } : {}) },
      };
    }
    case 'execution.failed@1': {
      const { executionId, turnId, error } = event.data;
      return { type: 'failed', data: { executionId, turnId, status: 'failed', error } };
    }
    case 'turn.reverted@1': {
      const { turnId, turnIds, executionIds, by } = event.data;
      return { type: 'reverted', data: { turnId, turnIds, executionIds, by } };
    }
    case 'message.edited@1': {
      const { messageId, turnId, text, by } = event.data;
      return { type: 'edited', data: { messageId, turnId, text, by } };
    }
    default:
      return null;
  }
}

/** A committed message as the stream shows it. */
function shownMessage(m: CommittedMessage) {
  return {
    messageId: m.messageId,
    role: m.role,
    pluginId: m.pluginId,
    runtimeId: m.runtimeId,
    outputKind: m.outputKind,
    text: m.text,
    ...(m.media ? { media: m.media } : {}),
  };
}
