import { type LlmConfig, ProviderRegistry } from '../../../providers';
import type { CatalogRuntime, RuntimeCatalog } from '../../catalog/runtime-catalog';
import type { RuntimeRequestInputs } from '../runtime-request';

/** Providers for requests that are built and never sent (the endpoint is a closed port). */
export const unsentProviders = (slots: LlmConfig['slots']): ProviderRegistry =>
  new ProviderRegistry({ slots }, () => ({ kind: 'emulator', apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1' }));

/** The inputs of a first turn's request of `runtime` with nothing around it (no history, outputs, segments or world); `over` adds what a test needs. */
export function bareRequestInputs(catalog: RuntimeCatalog, runtime: CatalogRuntime, over: Partial<RuntimeRequestInputs> = {}): RuntimeRequestInputs {
  return {
    sessionId: 's',
    locale: 'en',
    runtime,
    stageIndex: catalog.stageIndex(runtime),
    history: [],
    summaries: [],
    playerInput: { messageId: 'u', text: 'go' },
    outputs: [],
    segments: [],
    world: null,
    scanTail: [],
    ...over,
  };
}
