import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter } from '..';
import type { Continuation } from '..';
import { adapterContract } from './adapter-contract';
import { toolLoopContract } from './tool-loop-contract';

// retries: short backoff so the retry tests stay quick
adapterContract('OpenAI Chat Completions', 'gpt-4.1-mini', (e) => new OpenAIChatAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 2 }));
adapterContract('OpenAI Responses', 'gpt-4.1-mini', (e) => new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 2 }));
adapterContract('Anthropic Messages', 'claude-sonnet-4-5', (e) => new AnthropicAdapter({ apiKey: 'k', baseURL: e.anthropicBaseURL, maxRetries: 2 }));
adapterContract('Gemini native', 'gemini-2.5-flash', (e) => new GeminiAdapter({ apiKey: 'k', baseURL: e.geminiBaseURL, maxAttempts: 3 }));

type Blocks = Extract<Continuation, { protocol: 'anthropic' }>;
type Items = Extract<Continuation, { protocol: 'openai-responses' }>;
type Parts = Extract<Continuation, { protocol: 'gemini' }>;
const low = { overrides: { reasoning: { enabled: true, effort: 'low' as const } } };

toolLoopContract({
  name: 'OpenAI Chat Completions (DeepSeek reasoning_content)',
  make: (e) => new OpenAIChatAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 0 }),
  model: 'gpt-4.1-mini',
  reasoning: { model: 'deepseek-v4', call: {} },
  marker: (c) => (c as Extract<Continuation, { protocol: 'openai-chat' }>).reasoningContent,
  tamperings: [['its reasoning_content stripped', () => undefined]],
  reasoningOff: /"thinking":\{"type":"disabled"\}/,
});
toolLoopContract({
  name: 'OpenAI Responses (reasoning items)',
  make: (e) => new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 0 }),
  model: 'gpt-4.1-mini',
  reasoning: { model: 'gpt-5.1', call: low },
  marker: (c) => String((c as Items).items[0].encrypted_content),
  tamperings: [
    [
      'its encrypted_content changed',
      (c) => ({ ...c, items: (c as Items).items.map((i) => ({ ...i, encrypted_content: `x${String(i.encrypted_content)}` })) }),
    ],
    [
      'its encrypted_content from another reply',
      (c) => ({ ...c, items: (c as Items).items.map((i) => ({ ...i, encrypted_content: String(i.encrypted_content).split('.')[0] + '.bad' })) }),
    ],
  ],
  reasoningOff: /"reasoning":\{"effort":"none"\}/,
});
toolLoopContract({
  name: 'Anthropic Messages (thinking blocks)',
  make: (e) => new AnthropicAdapter({ apiKey: 'k', baseURL: e.anthropicBaseURL, maxRetries: 0 }),
  model: 'claude-sonnet-4-5',
  reasoning: { model: 'claude-sonnet-4-5', call: low },
  marker: (c) => String((c as Blocks).blocks[0].signature),
  tamperings: [
    ['the thinking signature stripped', (c) => ({ ...c, blocks: (c as Blocks).blocks.map(({ signature: _s, ...b }) => b) })],
    [
      'the thinking text changed',
      (c) => ({ ...c, blocks: (c as Blocks).blocks.map((b) => (b.type === 'thinking' ? { ...b, thinking: `${String(b.thinking)}!` } : b)) }),
    ],
    [
      'the redacted_thinking data changed',
      (c) => ({ ...c, blocks: (c as Blocks).blocks.map((b) => (b.type === 'redacted_thinking' ? { ...b, data: 'AAAA.bad' } : b)) }),
    ],
    ['the thinking blocks dropped', () => undefined],
  ],
  reasoningOff: /"thinking":\{"type":"disabled"\}/,
});
toolLoopContract({
  name: 'Gemini native (thought signatures)',
  make: (e) => new GeminiAdapter({ apiKey: 'k', baseURL: e.geminiBaseURL, maxAttempts: 1 }),
  model: 'gemini-2.5-flash',
  reasoning: { model: 'gemini-3-flash', call: {} },
  marker: (c) => String((c as Parts).parts.find((p) => p.thoughtSignature)?.thoughtSignature),
  tamperings: [
    ['the thought signature stripped (Gemini 3)', (c) => ({ ...c, parts: (c as Parts).parts.map(({ thoughtSignature: _s, ...p }) => p) })],
    [
      'the thought signature changed',
      (c) => ({ ...c, parts: (c as Parts).parts.map((p) => (p.thoughtSignature ? { ...p, thoughtSignature: `x${String(p.thoughtSignature)}` } : p)) }),
    ],
  ],
  // Gemini 3 always thinks (and signs its calls): reasoning: false is shown on 2.5 Flash
  reasoningOff: /"thinkingBudget":0/,
  reasoningOffModel: 'gemini-2.5-flash',
});
