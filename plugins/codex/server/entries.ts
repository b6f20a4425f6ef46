/** A codex entry as stored (plugin data namespace `entries`, keyed by `ctx.sdk.foldKey(term)`). */
export interface CodexEntry {
  term: string;
  category: string;
  summary: string;
  /** The turn number on which the story introduced it (a story field, not a timestamp). */
  discoveredOnTurn: number;
}
