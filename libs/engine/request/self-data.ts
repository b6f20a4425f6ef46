import type { PluginDataFold } from '../../events';
import type { PluginDataScopes } from '../plugin-host/journal-plugin-data';
import { PluginDataRaceError } from '../plugin-host/plugin-data-errors';
import type { SelfDataBlock } from '../../context';
import type { SelfDataEntry } from '../../plugins-sdk';

/**
 * Spec §4 "io.selfData": the bounded store projection of each namespace a runtime declares, of its
 * own plugin, in declaration order; one statement per namespace (never the whole namespace).
 */
export async function readSelfData(
  store: PluginDataScopes,
  scope: { tenantId: string; sessionId: string; pluginId: string },
  entries: readonly SelfDataEntry[],
): Promise<SelfDataBlock[]> {
  if (entries.length === 0) return [];
  const reader = store.scope(scope);
  return Promise.all(entries.map((e) => reader.selfData(e.namespace, e.limit === undefined ? {} : { limit: e.limit })));
}

/** The same blocks from the session's events folded up to the request (replay and audit: no store read). */
export function foldedSelfData(fold: PluginDataFold, pluginId: string, entries: readonly SelfDataEntry[]): SelfDataBlock[] {
  return entries.map((e) => fold.selfData(pluginId, e.namespace, e.limit === undefined ? {} : { limit: e.limit }));
}

/**
 * Guards the race between the worker's `io.selfData` read and its `llm.calling` append: called in
 * the append (after every catch-up), it throws `PluginDataRaceError` when a plugin-data event landed
 * after the journal version the read started from (the job is tried again and reads anew); else no events.
 */
export function selfDataUnchanged(
  journal: { pluginDataVersion: number },
  check: { job: { executionId: string; pluginId: string; runtimeId: string }; read: boolean; dataVersion: number },
): never[] {
  if (check.read && journal.pluginDataVersion !== check.dataVersion)
    throw new PluginDataRaceError(check.job.executionId, check.job.pluginId, check.job.runtimeId);
  return [];
}

/** The audit's account of the selfData blocks of a request: `self-data <namespace>: <shown> of <total> rows`. */
export function selfDataSources(inputs: { selfData?: readonly SelfDataBlock[] }): string[] {
  return (inputs.selfData ?? []).filter((b) => b.totalRows > 0).map((b) => `self-data ${b.namespace}: ${b.rows.length} of ${b.totalRows} rows`);
}
