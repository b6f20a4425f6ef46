import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter } from '..';
import { adapterContract } from './adapter-contract';

// retries: short backoff so the retry tests stay quick
adapterContract('OpenAI Chat Completions', 'gpt-4.1-mini', (e) => new OpenAIChatAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 2 }));
adapterContract('OpenAI Responses', 'gpt-4.1-mini', (e) => new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 2 }));
adapterContract('Anthropic Messages', 'claude-sonnet-4-5', (e) => new AnthropicAdapter({ apiKey: 'k', baseURL: e.anthropicBaseURL, maxRetries: 2 }));
adapterContract('Gemini native', 'gemini-2.5-flash', (e) => new GeminiAdapter({ apiKey: 'k', baseURL: e.geminiBaseURL, maxAttempts: 3 }));
