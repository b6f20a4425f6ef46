import type { HistoryMessage, HistorySummary } from '../../context';
import type { LoadedWorld, Locale } from '../../plugins-sdk';
import type { ToolDefinition } from '../../providers';
import type { ExecutionScope } from '../plugin-host/handler-context';
import type { PluginSettings } from '../plugin-host/plugin-settings';
import type { SessionPreferences } from '../preferences';
import type { RuntimeJob } from '../queue';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import type { ExecutionRun } from '../execution/fenced-append';
import type { TurnDeps } from '../execution/deps';
import type { ToolSet } from '../tools';
import type { TurnDeadline } from '../execution/turn-deadline';
import type { AgentPolicy } from './policy';
import type { ImageReference } from '../history/picture-attachments';

/** Everything the steps of one agent runtime's loop in one job work with. */
export interface AgentRunContext {
  deps: TurnDeps;
  job: RuntimeJob;
  run: ExecutionRun;
  runtime: CatalogRuntime;
  /** The plugin catalog of the generation the execution captured. */
  catalog: RuntimeCatalog;
  scope: ExecutionScope;
  locale: Locale;
  /** How [LANGUAGE] names the session's language (`SessionSettings.languageName`; undefined: a session recorded before names were). */
  languageName: string | undefined;
  world: LoadedWorld | null;
  pluginSettings: PluginSettings;
  /** The player's preferences per slot, as the log held them before the execution's input (`preferencesBefore`). */
  preferences: SessionPreferences;
  /** A branch's root session (`SessionSettings.rootSessionId`): the requests' prompt cache key is its. Undefined: not a branch. */
  rootSessionId?: string;
  /**
   * Committed history as the job read it once. It moves during an execution only when the
   * compaction barrier ends while a windowed agent that did not wait for it runs: each model call
   * is recorded only while the journal's `historyVersion` is still `historyVersion` below.
   */
  history: {
    messages: readonly HistoryMessage[];
    summaries: readonly HistorySummary[];
    scanTail: readonly { text: string }[];
    /** The most recent images of the uncompacted history (the recent-images message of a story runtime). */
    images?: readonly ImageReference[];
  };
  /** The journal's `historyVersion` when the job read `history` (read no earlier than that version). */
  historyVersion: number;
  /** Aborts when the execution ends elsewhere (a cancel): the step's model call is aborted with it, the job ends fenced out. */
  ended?: AbortSignal;
  /**
   * The turn's deadline in this attempt (`COVEL_TURN_DEADLINE_MS`): armed when a model call is sent,
   * its signal aborts with the `TurnDeadlineError` as its reason.
   */
  turnDeadline?: TurnDeadline;
  policy: AgentPolicy;
  tools: ToolSet;
  /** The runtime's tool definitions (the same in every step). */
  definitions: readonly ToolDefinition[];
}
