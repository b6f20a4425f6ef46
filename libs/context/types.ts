import type { Locale } from '../plugins-sdk';

/** A committed message of the session as the history store returns it (turn_messages row). */
export interface HistoryMessage {
  messageId: string;
  turnId: string;
  role: 'user' | 'assistant' | 'system';
  sourceType: 'player' | 'runtime' | 'system';
  pluginId: string | null;
  runtimeId: string | null;
  outputKind: 'story' | 'structured' | 'none' | null;
  text: string;
}

export interface RuntimeView {
  pluginId: string;
  runtimeId: string;
  outputKind: 'story' | 'structured' | 'none';
  /** The localized body of the runtime (its instructions). */
  body: string;
  history: { maxTurns?: number; includeSummaries: boolean };
}

export interface BuildContextParams {
  locale: Locale;
  runtime: RuntimeView;
  /** Committed, uncompacted history in order (the caller reads a bounded window). */
  history: readonly HistoryMessage[];
  playerInput: { messageId: string; text: string };
}

export interface ContextMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface AssembledContext {
  systemPrompt: string;
  messages: ContextMessage[];
  /** This turn's data blocks ('' when none). */
  turnContext: string;
}
