import { llmToml } from './llm-toml';

/**
 * Model slots with a small window for long-session tests and the compaction benchmark: an 8k story
 * and fast model (effective window 7,168, the story slot after its 1,024-token reserve).
 */
export const SMALL_WINDOW_LLM = llmToml({ story: { contextWindow: 8192, maxOutputTokens: 1024 }, fast: { contextWindow: 8192, maxOutputTokens: 512 } });
