import { attachRecentImages, IMAGE_LIMITS, type MediaStore } from '../../libs/engine';
import { capabilitiesOf, OpenAIChatAdapter, redactImageData } from '../../libs/providers';
import type { ContextMessage } from '../../libs/context';

const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const store = (items: Record<string, { sessionId: string; mimeType: string; bytes: Buffer }>): MediaStore => ({
  read: async (_tenant, id) => items[id] ?? null,
});
const images = (...ids: string[]): ContextMessage => ({
  role: 'user',
  content: ids.map((i) => `An image was shown: ${i}.`).join('\n'),
  images: ids.map((mediaId) => ({ mediaId, description: mediaId })),
});
const scope = { tenantId: 't', sessionId: 's' };
const input: ContextMessage = { role: 'user', content: 'go on' };

describe('§1 recently shown images, before each call', () => {
  it('a model that accepts images gets the bytes inline as base64', async () => {
    const out = await attachRecentImages(
      [images('a'), input],
      capabilitiesOf('gpt-4.1'),
      store({ a: { sessionId: 's', mimeType: 'image/png', bytes: png } }),
      scope,
    );
    expect(out[0].images).toEqual([{ mimeType: 'image/png', data: png.toString('base64') }]);
    expect(out[1]).toEqual({ role: 'user', content: 'go on' });
  });

  it('a text-only model: the whole message is dropped (the history description stays)', async () => {
    const out = await attachRecentImages(
      [images('a'), input],
      capabilitiesOf('deepseek-chat'),
      store({ a: { sessionId: 's', mimeType: 'image/png', bytes: png } }),
      scope,
    );
    expect(out).toEqual([{ role: 'user', content: 'go on' }]);
  });

  it('by capability, not name: an llm.toml input setting turns images on', async () => {
    const out = await attachRecentImages(
      [images('a')],
      capabilitiesOf('my-local-model', { imageInput: true }),
      store({ a: { sessionId: 's', mimeType: 'image/png', bytes: png } }),
      scope,
    );
    expect(out[0].images).toHaveLength(1);
  });

  it('limits: at most 2, too large, wrong format, unreadable and other-session images are not sent', async () => {
    const media = store({
      ok1: { sessionId: 's', mimeType: 'image/png', bytes: png },
      ok2: { sessionId: 's', mimeType: 'image/webp', bytes: png },
      ok3: { sessionId: 's', mimeType: 'image/gif', bytes: png },
      big: { sessionId: 's', mimeType: 'image/png', bytes: Buffer.alloc(IMAGE_LIMITS.maxBytes + 1) },
      tiff: { sessionId: 's', mimeType: 'image/tiff', bytes: png },
      other: { sessionId: 'elsewhere', mimeType: 'image/png', bytes: png },
    });
    const caps = capabilitiesOf('gpt-4.1');
    expect((await attachRecentImages([images('ok1', 'ok2', 'ok3')], caps, media, scope))[0].images).toHaveLength(2);
    for (const id of ['big', 'tiff', 'other', 'missing']) expect(await attachRecentImages([images(id)], caps, media, scope)).toEqual([]);
    expect(IMAGE_LIMITS.maxBytes).toBe(3_750_000);
  });

  it('traces record lengths, never bytes', async () => {
    const out = await attachRecentImages([images('a')], capabilitiesOf('gpt-4.1'), store({ a: { sessionId: 's', mimeType: 'image/png', bytes: png } }), scope);
    const body = new OpenAIChatAdapter({ apiKey: 'k' }).buildRequest({ model: 'gpt-4.1', messages: out });
    const traced = JSON.stringify(redactImageData(body));
    expect(JSON.stringify(body)).toContain(png.toString('base64'));
    expect(traced).not.toContain(png.toString('base64'));
    expect(traced).toContain(`[${png.length} bytes]`);
    const gemini = redactImageData({ contents: [{ parts: [{ inlineData: { mimeType: 'image/png', data: png.toString('base64') } }] }] });
    expect(JSON.stringify(gemini)).toContain(`"data":"[${png.length} bytes]"`);
    const anthropic = redactImageData({
      messages: [{ content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } }] }],
    });
    expect(JSON.stringify(anthropic)).not.toContain(png.toString('base64'));
  });
});

describe('one cache-boundary sentinel', () => {
  it('libs/providers strips the same character libs/context writes (the two libraries may not import each other)', async () => {
    const { CACHE_BREAK } = await import('../../libs/context');
    const { PROVIDER_CACHE_BREAK } = await import('../../libs/providers');
    expect(PROVIDER_CACHE_BREAK).toBe(CACHE_BREAK);
  });
});
