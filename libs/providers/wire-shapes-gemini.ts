import { z } from 'zod';
import { count, loose, toolName } from './wire-shape-parts';

// ---------- Gemini generateContent ----------

const DATA_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'] as const;
const part = loose({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  inlineData: loose({ mimeType: z.string(), data: z.string() }).optional(),
  functionCall: loose({ id: z.string().optional(), name: toolName, args: z.record(z.string(), z.unknown()).optional() }).optional(),
  functionResponse: loose({ id: z.string().optional(), name: toolName, response: z.record(z.string(), z.unknown()) }).optional(),
}).refine((p) => DATA_FIELDS.filter((k) => k in p).length === 1, 'a part carries exactly one kind of data');
const geminiContent = loose({ role: z.enum(['user', 'model']), parts: z.array(part).min(1) });
const usageMetadata = loose({
  promptTokenCount: count.optional(),
  cachedContentTokenCount: count.optional(),
  candidatesTokenCount: count.optional(),
  toolUsePromptTokenCount: count.optional(),
  thoughtsTokenCount: count.optional(),
  totalTokenCount: count.optional(),
})
  .refine((u) => (u.cachedContentTokenCount ?? 0) <= (u.promptTokenCount ?? 0), 'the cached tokens are part of promptTokenCount')
  .refine(
    (u) =>
      u.totalTokenCount === undefined ||
      u.totalTokenCount === (u.promptTokenCount ?? 0) + (u.candidatesTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
    'totalTokenCount is prompt + candidates + tool-use prompt + thoughts',
  );
const generateContentResponse = loose({
  candidates: z
    .array(
      loose({
        content: loose({ role: z.literal('model').optional(), parts: z.array(part).optional() }).optional(),
        finishReason: z
          .string()
          .regex(/^[A-Z_]+$/)
          .optional(),
        index: count.optional(),
      }),
    )
    .optional(),
  usageMetadata: usageMetadata.optional(),
  modelVersion: z.string().optional(),
  responseId: z.string().optional(),
});
const geminiRequest = loose({
  contents: z.array(geminiContent).min(1),
  systemInstruction: loose({ role: z.string().optional(), parts: z.array(part).min(1) }).optional(),
  tools: z
    .array(
      loose({
        functionDeclarations: z
          .array(
            loose({ name: toolName, description: z.string().optional() }).refine(
              (d) => !('parameters' in d && 'parametersJsonSchema' in d),
              'parameters or parametersJsonSchema, not both',
            ),
          )
          .optional(),
      }),
    )
    .optional(),
  toolConfig: loose({
    functionCallingConfig: loose({
      mode: z.enum(['AUTO', 'ANY', 'NONE', 'VALIDATED']).optional(),
      allowedFunctionNames: z.array(toolName).optional(),
    }).optional(),
  }).optional(),
  generationConfig: loose({
    maxOutputTokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
    thinkingConfig: loose({ thinkingBudget: z.number().int().min(-1).optional(), includeThoughts: z.boolean().optional() }).optional(),
  }).optional(),
});

/** Gemini generateContent: the REST request, the response, a streamed chunk (a response each). */
export const GEMINI_WIRE = { request: geminiRequest, response: generateContentResponse, chunk: generateContentResponse };
