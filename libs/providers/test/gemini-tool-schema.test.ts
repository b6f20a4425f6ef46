import { GeminiAdapter } from '..';
import { ProviderEmulator } from '../../emulator';
import type { ChatMessage, ToolDefinition } from '..';

/**
 * A tool whose parameters use JSON Schema beyond Gemini's OpenAPI `Schema` (anyOf branches with
 * `const`, `additionalProperties`): the shape of the framework's `emit-event` definition
 * (libs/engine/tools/emit-event.ts). The adapter sends it as `parametersJsonSchema`, which takes
 * JSON Schema as it is; under `parameters` the API refuses it.
 */
const emitEvent: ToolDefinition = {
  name: 'emit-event',
  description: 'Emit a domain event of this session.',
  parameters: {
    type: 'object',
    properties: {
      topic: { type: 'string', enum: ['books.balanced', 'door.opened'], description: 'The event topic.' },
      payload: { type: 'object', description: "The event's payload, in the shape of its topic." },
    },
    required: ['topic', 'payload'],
    additionalProperties: false,
    anyOf: [
      {
        properties: {
          topic: { const: 'books.balanced' },
          payload: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'], additionalProperties: false },
        },
      },
      { properties: { topic: { const: 'door.opened' }, payload: { type: 'object', properties: { door: { type: 'string' } } } } },
    ],
  },
};

describe('Gemini function declarations: JSON Schema goes as parametersJsonSchema', () => {
  const emulator = new ProviderEmulator();
  let adapter: GeminiAdapter;
  beforeAll(async () => {
    await emulator.start();
    adapter = new GeminiAdapter({ apiKey: 'k', baseURL: emulator.geminiBaseURL, maxAttempts: 1 });
  });
  afterAll(() => emulator.stop());

  it('a tool loop with an anyOf / const schema: the forced call, its result, then the text answer', async () => {
    let messages: ChatMessage[] = [
      { role: 'system', content: 'You are the bookkeeper.' },
      { role: 'user', content: 'Balance the books.' },
    ];
    const call = { model: 'gemini-2.5-flash', tools: [emitEvent], preferences: { toolChoice: { name: 'emit-event' } } };
    const first = adapter.buildRequest({ ...call, messages });
    const declaration = (first.tools as { functionDeclarations: Record<string, unknown>[] }[])[0].functionDeclarations[0];
    expect(declaration).toEqual({ name: 'emit-event', description: emitEvent.description, parametersJsonSchema: emitEvent.parameters });
    const reply = await adapter.send(first);
    // the emulated model answers with the schema's first branch: the call validates against it
    expect(reply.toolCalls.map((c) => [c.name, c.arguments])).toEqual([['emit-event', { topic: 'books.balanced', payload: { key: 'x' } }]]);
    messages = [
      ...messages,
      { role: 'assistant', content: reply.text, toolCalls: reply.toolCalls },
      ...reply.toolCalls.map((c): ChatMessage => ({ role: 'tool', content: '{"emitted":"books.balanced"}', toolCallId: c.id, toolName: c.name })),
    ];
    const second = await adapter.send(adapter.buildRequest({ ...call, messages }));
    expect(second.toolCalls).toEqual([]);
    expect(second.text).not.toBe('');
  });

  it('the same schema as OpenAPI `parameters` is refused (400, the first keyword the Schema message has no field for)', async () => {
    const body = {
      contents: [{ role: 'user', parts: [{ text: 'Balance the books.' }] }],
      tools: [{ functionDeclarations: [{ name: 'emit-event', description: 'x', parameters: emitEvent.parameters }] }],
    };
    const r = await fetch(`${emulator.url}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', body: JSON.stringify(body) });
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({
      error: {
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: `Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters': Cannot find field.`,
      },
    });
    // a nested unknown keyword is found at its proto path
    const { additionalProperties: _a, ...nested } = emitEvent.parameters;
    const r2 = await fetch(`${emulator.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      body: JSON.stringify({ ...body, tools: [{ functionDeclarations: [{ name: 'emit-event', description: 'x', parameters: nested }] }] }),
    });
    expect(((await r2.json()) as { error: { message: string } }).error.message).toBe(
      `Invalid JSON payload received. Unknown name "const" at 'tools[0].function_declarations[0].parameters.any_of[0].properties[0].value': Cannot find field.`,
    );
  });
});
