import { createServer, type Server } from 'node:http';
import { OpenAIChatAdapter, OpenAIResponsesAdapter, type ProviderAdapter, redactImageData } from '..';

/** What reached the server of one request: its line, its header fields as sent (names and values, in order) and its body's bytes. */
interface Seen {
  line: string;
  fields: string[];
  body: string;
}

const CHAT = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4.1-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
};
const CHAT_STREAM = [
  { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1-mini', choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] },
  { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1-mini', choices: [{ index: 0, delta: { content: 'lo.' }, finish_reason: 'stop' }] },
];
const RESPONSE = {
  id: 'resp_1',
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'gpt-4.1-mini',
  output: [{ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello.', annotations: [] }] }],
  usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12, input_tokens_details: { cached_tokens: 0 } },
};

describe('SendOptions.json: the body sent as the JSON text the caller made, the same request on the wire', () => {
  let server: Server;
  let baseURL: string;
  const seen: Seen[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ line: `${req.method} ${req.url}`, fields: req.rawHeaders.map((f) => f.replace(/^127\.0\.0\.1:\d+$/, '<host>')), body });
        if ((JSON.parse(body) as { stream?: boolean }).stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(`${CHAT_STREAM.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(req.url?.endsWith('/responses') ? RESPONSE : CHAT));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = (stream: boolean) => ({
    model: 'gpt-4.1-mini',
    messages: [
      { role: 'system' as const, content: 'You narrate. "Quotes", \\ and ünïcödé 🐉 stay as they are.' },
      { role: 'user' as const, content: 'Look around the square.' },
    ],
    maxOutputTokens: 256,
    stream,
    cacheKey: 'covel-key',
  });

  /** The requests of `send` without and then with `json`, and both answers. */
  async function both(adapter: ProviderAdapter, stream: boolean) {
    const body = adapter.buildRequest(call(stream));
    const text = JSON.stringify(body);
    const plain = await adapter.send(body, {});
    const given = await adapter.send(body, { json: text });
    const [a, b] = seen.slice(-2) as [Seen, Seen];
    return { a, b, text, plain, given };
  }

  it.each([
    ['Chat Completions, not streamed', () => new OpenAIChatAdapter({ apiKey: 'k', baseURL, maxRetries: 0 }), false],
    ['Chat Completions, streamed', () => new OpenAIChatAdapter({ apiKey: 'k', baseURL, maxRetries: 0 }), true],
    ['Responses, not streamed', () => new OpenAIResponsesAdapter({ apiKey: 'k', baseURL, maxRetries: 0 }), false],
  ])('%s: the same request line, header fields and body bytes; the same answer', async (_name, make, stream) => {
    const { a, b, text, plain, given } = await both(make(), stream);
    expect(b).toEqual(a);
    expect(b.body).toBe(text);
    expect(b.fields).toContain('application/json');
    expect(given).toEqual(plain);
    expect(given.text).toBe('Hello.');
  });

  it('the bytes sent are the text given, not the body serialized again', async () => {
    for (const adapter of [
      new OpenAIChatAdapter({ apiKey: 'k', baseURL, maxRetries: 0 }),
      new OpenAIResponsesAdapter({ apiKey: 'k', baseURL, maxRetries: 0 }),
    ]) {
      const body = adapter.buildRequest(call(false));
      // the same JSON value in another text: what arrives shows which was sent
      const spaced = JSON.stringify(body, null, 1);
      await adapter.send(body, { json: spaced });
      expect(seen.at(-1)!.body).toBe(spaced);
    }
  });

  it('redactImageData gives a body without images back as it is (so its trace text is the wire text), and copies one with images', () => {
    const body = new OpenAIChatAdapter({ apiKey: 'k', baseURL }).buildRequest(call(false));
    expect(redactImageData(body)).toBe(body);
    const withImage = {
      ...body,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'see' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
    };
    const redacted = redactImageData(withImage);
    expect(redacted).not.toBe(withImage);
    expect(JSON.stringify(redacted)).toBe(
      JSON.stringify({
        ...withImage,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'see' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,[3 bytes]' } },
            ],
          },
        ],
      }),
    );
    // the input is left as it was
    expect((withImage.messages[0].content[1] as { image_url: { url: string } }).image_url.url).toBe('data:image/png;base64,AAAA');
    expect(redacted.model).toBe(body.model);
  });
});
