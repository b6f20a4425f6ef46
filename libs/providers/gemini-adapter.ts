import type { GenerateContentParameters, GenerateContentResponse, GoogleGenAI } from '@google/genai';
import { stripCacheBreaks } from './cache-break';
import { continuationFor } from './continuation';
import { splitLeadingSystem, wrapSystemInstruction } from './late-system';
import { capabilitiesOf, type ModelCapabilities } from './model-table';
import { StreamWatch, toProviderError } from './provider-errors';
import { resolveReasoning, resolveToolChoice, thinkingBudget } from './request-preferences';
import { type ChatMessage, type ModelCall, type ModelResponse, type ProviderAdapter, ProviderError, type SendOptions, type ToolCall } from './types';

export interface GeminiAdapterOptions {
  apiKey: string;
  baseURL?: string;
  /** Attempts including the first (the SDK's own retry with backoff). */
  maxAttempts?: number;
  /** The SDK's timeout per attempt, which stays armed while a stream is read; null: none (the slot's deadlines bound the call). */
  timeoutMs?: number | null;
  /** Default true: late system messages stay in place as user text, plain text is merged (spec §2). */
  lateSystemAsUser?: boolean;
  capabilities?: Partial<ModelCapabilities>;
}

type Part = Record<string, unknown>;
type Content = { role: 'user' | 'model'; parts: Part[] };

const kindOf = (c: Content) =>
  c.parts.every((p) => 'text' in p)
    ? 'text'
    : c.parts.every((p) => 'functionResponse' in p)
      ? 'function-response'
      : c.parts.some((p) => 'functionCall' in p)
        ? 'function-call'
        : 'other';

/**
 * Gemini native protocol on @google/genai. The body is the REST request (`contents`,
 * `systemInstruction`, `tools`, `toolConfig`, `generationConfig`); `send` hands it to the SDK.
 */
export class GeminiAdapter implements ProviderAdapter {
  readonly protocol = 'gemini' as const;
  private readonly client: GoogleGenAI;

  constructor(private readonly options: GeminiAdapterOptions) {
    // required here, not at the top: only a process with a slot on this protocol loads the SDK (~0.1 s of CPU)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { GoogleGenAI } = require('@google/genai') as typeof import('@google/genai');
    this.client = new GoogleGenAI({
      apiKey: options.apiKey,
      httpOptions: {
        ...(options.baseURL ? { baseUrl: options.baseURL } : {}),
        ...(options.timeoutMs === null ? {} : { timeout: options.timeoutMs ?? 120_000 }),
        retryOptions: { attempts: options.maxAttempts ?? 4, initialDelay: 0.5, maxDelay: 8 },
        // the global fetch of the calling realm (the SDK's own lookup fails inside Jest's VM context)
        fetch: (input, init) => fetch(input, init),
      },
    });
  }

  buildRequest(call: ModelCall): Record<string, unknown> {
    const caps = capabilitiesOf(call.model, this.options.capabilities);
    const inPlace = this.options.lateSystemAsUser !== false;
    const { leading, rest } = splitLeadingSystem(call.messages);
    const system = inPlace ? leading : call.messages.filter((m) => m.role === 'system');
    const converted = (inPlace ? rest : call.messages.filter((x) => x.role !== 'system')).map(toContent);
    const contents = inPlace ? mergeAdjacent(responsesAfterCalls(converted)) : converted;
    const body: Record<string, unknown> = { model: call.model, contents };
    if (system.length) body.systemInstruction = { parts: [{ text: system.map((m) => stripCacheBreaks(m.content)).join('\n\n') }] };
    if (call.tools?.length) {
      body.tools = [{ functionDeclarations: call.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters })) }];
      const choice = resolveToolChoice(call, caps);
      if (choice !== undefined) {
        body.toolConfig = {
          functionCallingConfig:
            typeof choice === 'object' ? { mode: 'ANY', allowedFunctionNames: [choice.name] } : { mode: choice === 'required' ? 'ANY' : choice.toUpperCase() },
        };
      }
    }
    const generationConfig: Record<string, unknown> = {};
    if (call.maxOutputTokens !== undefined) generationConfig.maxOutputTokens = call.maxOutputTokens;
    if (call.temperature !== undefined) generationConfig.temperature = call.temperature;
    if (call.outputSchema) {
      generationConfig.responseMimeType = 'application/json';
      generationConfig.responseJsonSchema = call.outputSchema.schema;
    }
    const reasoning = resolveReasoning(call, caps);
    if (caps.reasoning === 'gemini-budget' && reasoning.kind !== 'omit') {
      generationConfig.thinkingConfig = { thinkingBudget: reasoning.kind === 'on' ? thinkingBudget(reasoning.effort) : 0 };
    }
    if (Object.keys(generationConfig).length) body.generationConfig = generationConfig;
    if (call.stream) body.stream = true;
    return body;
  }

  async send(body: Record<string, unknown>, options: SendOptions = {}): Promise<ModelResponse> {
    const { model, contents, systemInstruction, tools, toolConfig, generationConfig, stream } = body as {
      model: string;
      contents: unknown;
      systemInstruction?: unknown;
      tools?: unknown;
      toolConfig?: unknown;
      generationConfig?: Record<string, unknown>;
      stream?: boolean;
    };
    const params = {
      model,
      contents,
      config: {
        ...(generationConfig ?? {}),
        ...(systemInstruction ? { systemInstruction } : {}),
        ...(tools ? { tools } : {}),
        ...(toolConfig ? { toolConfig } : {}),
        abortSignal: options.signal,
      },
    } as GenerateContentParameters;
    const watch = stream ? new StreamWatch(options.signal) : undefined;
    try {
      if (watch) {
        const watched = watch.watch(options);
        let last: GenerateContentResponse | null = null;
        let text = '';
        const calls: ToolCall[] = [];
        const parts: Part[] = [];
        const chunks = await this.client.models.generateContentStream(params);
        watch.opened = true;
        for await (const chunk of chunks) {
          options.onProgress?.();
          for (const p of chunk.candidates?.[0]?.content?.parts ?? []) appendPart(parts, { ...p });
          const delta = chunk.candidates?.[0]?.content?.parts?.flatMap((p) => (p.text && !p.thought ? [p.text] : [])).join('') ?? '';
          if (delta) {
            text += delta;
            watched.onText?.(delta);
          }
          calls.push(...functionCalls(chunk));
          last = chunk;
        }
        // a stream cut before its first chunk ends without an error: nothing was answered
        if (last === null) throw new ProviderError('gemini: the stream ended without a chunk', null, true);
        return { text, toolCalls: calls, finishReason: last.candidates?.[0]?.finishReason ?? null, usage: usageOf(last), ...reasoningOf(parts) };
      }
      const r = await this.client.models.generateContent(params);
      const text = r.candidates?.[0]?.content?.parts?.flatMap((p) => (p.text && !p.thought ? [p.text] : [])).join('') ?? '';
      const parts = (r.candidates?.[0]?.content?.parts ?? []).map((p) => ({ ...p }) as Part);
      return { text, toolCalls: functionCalls(r), finishReason: r.candidates?.[0]?.finishReason ?? null, usage: usageOf(r), ...reasoningOf(parts) };
    } catch (error) {
      throw toProviderError('gemini', error, watch);
    }
  }
}

/**
 * A function response comes right after its function call: user text placed between a call and
 * its response (an instruction, say) moves to after the response.
 */
function responsesAfterCalls(contents: Content[]): Content[] {
  const out: Content[] = [];
  for (let i = 0; i < contents.length; i++) {
    out.push(contents[i]);
    if (kindOf(contents[i]) !== 'function-call') continue;
    let j = i + 1;
    while (j < contents.length && contents[j].role === 'user') j++;
    const between = contents.slice(i + 1, j);
    out.push(...between.filter((c) => kindOf(c) === 'function-response'), ...between.filter((c) => kindOf(c) !== 'function-response'));
    i = j - 1;
  }
  return out;
}

/** Adjacent plain text of one role merges; function responses share a content only with each other. */
function mergeAdjacent(contents: Content[]): Content[] {
  const out: Content[] = [];
  for (const c of contents) {
    const last = out[out.length - 1];
    const same = last && last.role === c.role && kindOf(last) === kindOf(c) && (kindOf(c) === 'text' || kindOf(c) === 'function-response');
    if (same) last.parts.push(...c.parts);
    else out.push({ role: c.role, parts: [...c.parts] });
  }
  return out;
}

function toContent(m: ChatMessage): Content {
  if (m.role === 'system') return { role: 'user', parts: [{ text: wrapSystemInstruction(m.content) }] };
  if (m.role === 'tool')
    return {
      role: 'user',
      parts: [
        {
          functionResponse: { ...(m.toolCallId ? { id: m.toolCallId } : {}), name: m.toolName ?? '', response: { name: m.toolName ?? '', content: m.content } },
        },
      ],
    };
  if (m.role === 'assistant') {
    // the model turn as it came, thought signatures on the same parts
    const carried = continuationFor(m.continuation, 'gemini');
    if (carried) return { role: 'model', parts: carried.parts.map((p) => ({ ...p })) };
    const parts: Part[] = [];
    if (m.content) parts.push({ text: stripCacheBreaks(m.content) });
    for (const c of m.toolCalls ?? []) parts.push({ functionCall: { id: c.id, name: c.name, args: c.arguments } });
    return { role: 'model', parts };
  }
  return {
    role: 'user',
    parts: [{ text: stripCacheBreaks(m.content) }, ...(m.images ?? []).map((i) => ({ inlineData: { mimeType: i.mimeType, data: i.data } }))],
  };
}

function functionCalls(r: GenerateContentResponse): ToolCall[] {
  return (r.candidates?.[0]?.content?.parts ?? []).flatMap((p) =>
    p.functionCall
      ? [
          {
            id: p.functionCall.id ?? `${p.functionCall.name}-0`,
            name: p.functionCall.name ?? '',
            arguments: (p.functionCall.args ?? {}) as Record<string, unknown>,
          },
        ]
      : [],
  );
}

/**
 * promptTokenCount includes the cached content; the thinking is counted apart from the candidates
 * (thoughtsTokenCount, in totalTokenCount) and billed as output: both are output tokens here.
 */
function usageOf(r: GenerateContentResponse | null): ModelResponse['usage'] {
  const u = r?.usageMetadata;
  return {
    inputTokens: u?.promptTokenCount ?? 0,
    outputTokens: (u?.candidatesTokenCount ?? 0) + (u?.thoughtsTokenCount ?? 0),
    cachedInputTokens: u?.cachedContentTokenCount ?? 0,
  };
}

const plainText = (p: Part) => typeof p.text === 'string' && Object.keys(p).every((k) => k === 'text' || k === 'thought' || k === 'thoughtSignature');

/**
 * A streamed part joins the previous one when both are text of the same kind (thought or not) and
 * the previous has no signature yet: the parts then match the non-streamed reply's.
 */
function appendPart(parts: Part[], part: Part): void {
  const last = parts[parts.length - 1];
  if (last && plainText(last) && plainText(part) && last.thoughtSignature === undefined && Boolean(last.thought) === Boolean(part.thought)) {
    parts[parts.length - 1] = { ...last, ...part, text: String(last.text) + String(part.text) };
    return;
  }
  parts.push(part);
}

/** Thought text, and the model content as the continuation when it carries reasoning state (thought parts or signatures). */
function reasoningOf(parts: Part[]): Pick<ModelResponse, 'thinking' | 'continuation'> {
  if (!parts.some((p) => p.thought === true || typeof p.thoughtSignature === 'string')) return {};
  const thoughts = parts.flatMap((p) => (p.thought === true && typeof p.text === 'string' ? [p.text] : [])).join('');
  return { ...(thoughts ? { thinking: { text: thoughts } } : {}), continuation: { protocol: 'gemini', parts } };
}
