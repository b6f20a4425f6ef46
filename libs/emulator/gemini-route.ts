import { z } from 'zod';
import { PROVIDER_CACHE_BREAK as CACHE_BREAK } from '../providers';
import { estimateTokens } from '../text';
import { geminiDeclarationError, geminiLoopError, geminiThinking, signPart } from './gemini-checks';
import { emulatedReasoning } from './reasoning';
import { deltas, type EmulatorReply, type EmulatorRoute, sse } from './route';
import { geminiCacheText } from './cache-text';
import { schemaInText } from './schema-instance';

const Part = z
  .object({
    text: z.string().optional(),
    functionCall: z.object({ name: z.string() }).passthrough().optional(),
    functionResponse: z.object({ name: z.string() }).passthrough().optional(),
  })
  .passthrough();
const GenerateBody = z
  .object({
    contents: z.array(z.object({ role: z.string(), parts: z.array(Part).min(1) })).min(1),
    systemInstruction: z
      .object({ parts: z.array(Part) })
      .passthrough()
      .optional(),
    tools: z.array(z.object({ functionDeclarations: z.array(z.object({ name: z.string() }).passthrough()).optional() }).passthrough()).optional(),
    toolConfig: z
      .object({ functionCallingConfig: z.object({ mode: z.string().optional(), allowedFunctionNames: z.array(z.string()).optional() }).passthrough() })
      .passthrough()
      .optional(),
    generationConfig: z.object({ responseJsonSchema: z.unknown().optional(), responseSchema: z.unknown().optional() }).passthrough().optional(),
  })
  .passthrough();

function googleError(code: number, message: string): EmulatorReply {
  return { kind: 'json', status: code, body: { error: { code, message, status: code === 400 ? 'INVALID_ARGUMENT' : 'INTERNAL' } } };
}

const isCall = (c: { parts: z.infer<typeof Part>[] }) => c.parts.some((p) => p.functionCall);
const isResponse = (c: { parts: z.infer<typeof Part>[] }) => c.parts.some((p) => p.functionResponse);

/** POST /v1beta/models/{model}:generateContent and :streamGenerateContent (alt=sse), implicit caching. */
export const geminiRoute: EmulatorRoute = {
  method: 'POST',
  path: /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/,
  streams: (_body, match) => match[2] === 'streamGenerateContent',
  refuseStreaming: () => googleError(400, 'streamGenerateContent: streaming is not supported for this model.'),
  handle(raw, { state, match, reply: answer }) {
    const parsed = GenerateBody.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return googleError(400, `Invalid JSON payload: ${issue.path.join('.')}: ${issue.message}`);
    }
    const body = parsed.data;
    const model = match[1];
    const bad = body.contents.findIndex((c) => c.role !== 'user' && c.role !== 'model');
    if (bad >= 0) return googleError(400, `Please use a valid role: user, model. (contents[${bad}].role = "${body.contents[bad].role}")`);
    for (let i = 0; i < body.contents.length; i++) {
      const c = body.contents[i];
      if (isResponse(c) && (i === 0 || !isCall(body.contents[i - 1]))) {
        return googleError(400, 'Please ensure that function response turn comes immediately after a function call turn.');
      }
      if (isResponse(c) && c.parts.some((p) => !p.functionResponse)) return googleError(400, 'A function response turn may only contain function responses.');
    }
    const declarationError = geminiDeclarationError(body.tools ?? []);
    if (declarationError) return googleError(400, declarationError);
    const loopError = geminiLoopError(model, body.contents);
    if (loopError) return googleError(400, loopError);
    if (JSON.stringify(body).includes(CACHE_BREAK)) return googleError(400, 'internal cache marker leaked into the request');
    const transcript = body.contents.map((c) => ({ role: c.role === 'model' ? 'assistant' : 'user', content: c.parts.map((p) => p.text ?? '').join('') }));
    const toolResults = body.contents.flatMap((c) => c.parts.filter((p) => p.functionResponse)).length;
    const fcc = body.toolConfig?.functionCallingConfig;
    const declarations = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []);
    const choice = fcc?.mode === 'ANY' ? (fcc.allowedFunctionNames?.[0] ?? 'required') : fcc?.mode === 'NONE' ? 'none' : 'auto';
    const systemText = (body.systemInstruction?.parts ?? []).map((p) => p.text ?? '').join('');
    const reply = answer(
      {
        transcript,
        tools: declarations.map((d) => ({
          name: d.name,
          parameters: (d as Record<string, unknown>).parametersJsonSchema ?? (d as Record<string, unknown>).parameters,
        })),
        toolChoice: choice,
        afterToolResult: isResponse(body.contents[body.contents.length - 1]),
        toolResults,
        system: systemText,
        schema: body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema ?? schemaInText(systemText),
      },
      { protocol: 'gemini', model, cacheKey: null },
    );
    const { key, prompt } = geminiCacheText(model, body);
    const promptTokens = estimateTokens(prompt);
    const cached = state.geminiCache.lookup(key, prompt);
    const text = reply.kind === 'text' ? reply.text : '';
    // thinking: a signature on the function call (or the text), the thought itself when asked for
    const thinking = geminiThinking(model, body.generationConfig);
    const thoughts = (body.generationConfig as { thinkingConfig?: { includeThoughts?: boolean } } | undefined)?.thinkingConfig?.includeThoughts === true;
    const reasoning = thinking ? emulatedReasoning(transcript, toolResults) : '';
    const answerPart: Record<string, unknown> = reply.kind === 'tool' ? { functionCall: { name: reply.name, args: reply.args } } : { text };
    const signed = thinking ? signPart(answerPart) : answerPart;
    const thoughtParts = thinking && thoughts ? [{ text: reasoning, thought: true }] : [];
    const parts = [...thoughtParts, signed];
    // the thinking is counted apart from the candidates (thoughtsTokenCount), as the reference's usageMetadata does
    const candidatesTokenCount = estimateTokens(reply.kind === 'tool' ? JSON.stringify(reply.args) : text);
    const thoughtsTokenCount = estimateTokens(reasoning);
    const usageMetadata = {
      promptTokenCount: promptTokens,
      candidatesTokenCount,
      ...(thinking ? { thoughtsTokenCount } : {}),
      totalTokenCount: promptTokens + candidatesTokenCount + thoughtsTokenCount,
      cachedContentTokenCount: cached,
    };
    const response = (p: unknown[], finish: string | undefined, usage: unknown) => ({
      candidates: [{ content: { role: 'model', parts: p }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
      usageMetadata: usage,
      modelVersion: model,
    });
    if (match[2] === 'generateContent') return { kind: 'json', status: 200, body: response(parts, 'STOP', usageMetadata) };
    const words = deltas(text);
    const textChunks = words.map((d, i) => [
      i === words.length - 1 && signed.thoughtSignature ? { text: d, thoughtSignature: signed.thoughtSignature } : { text: d },
    ]);
    const chunks = [...(thoughtParts.length ? [thoughtParts] : []), ...(reply.kind === 'tool' ? [[signed]] : textChunks)];
    return sse(
      chunks.map((p, i) => ({
        data: response(p, i === chunks.length - 1 ? 'STOP' : undefined, i === chunks.length - 1 ? usageMetadata : { promptTokenCount: promptTokens }),
      })),
    );
  },
};
