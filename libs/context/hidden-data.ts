import { EngineError } from '../errors';
import type { BuildContextParams } from './types';

/** Spec §1: the hidden world data lives in namespaces `_hidden` and `_hidden.*`; it never enters a prompt. */
export function isHiddenNamespace(name: string): boolean {
  return name === '_hidden' || name.startsWith('_hidden.');
}

/** A request asked to inject hidden world data (`_hidden.*`) into a prompt: buildContext throws, nothing is assembled. */
export class HiddenDataInjectionError extends EngineError {
  readonly code = 'HIDDEN_DATA_INJECTION';
  readonly category = 'invalid';
  constructor(
    readonly runtime: string,
    readonly injected: string,
  ) {
    super(`runtime ${runtime}: "${injected}" is hidden world data (_hidden.*) and cannot be injected into a prompt`);
  }
}

/**
 * Spec §1 "Injecting the hidden world data _hidden.* throws an error directly": the injected plugin
 * data is the `io.selfData` blocks (the manifest refuses such a namespace at start-up already;
 * this is the assembly's own guard).
 */
export function assertNoHiddenData(params: Pick<BuildContextParams, 'runtime' | 'selfData'>): void {
  const runtime = `${params.runtime.pluginId}/${params.runtime.runtimeId}`;
  for (const b of params.selfData ?? []) if (isHiddenNamespace(b.namespace)) throw new HiddenDataInjectionError(runtime, b.namespace);
}
