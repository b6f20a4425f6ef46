import { createHash, randomUUID } from 'node:crypto';
import { attachImages, IMAGE_LIMITS, type ImageReference, readRecentImages, recentImageReferences } from '../../libs/engine';
import { OpenAIChatAdapter, redactImageData } from '../../libs/providers';
import { buildContext, type BuildContextParams, imageTokens, type RecentImage } from '../../libs/context';
import type { MediaStore, StoredMedia } from '../../libs/events';

const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const scope = { tenantId: 't', sessionId: 's' };

/** A store of this tenant's session `s` (and one item of session `elsewhere`). */
function store(items: Record<string, StoredMedia & { sessionId?: string }>): MediaStore {
  return {
    put: async () => randomUUID(),
    get: async (ref) => {
      const item = items[ref.mediaId];
      return item && ref.tenantId === 't' && ref.sessionId === (item.sessionId ?? 's') ? { mimeType: item.mimeType, bytes: item.bytes, meta: item.meta } : null;
    },
  };
}
const ref = (mediaId: string, bytes: Buffer, over: Partial<ImageReference> = {}): ImageReference => ({
  mediaId,
  modality: 'image',
  mimeType: 'image/png',
  byteLength: bytes.length,
  sha256: sha(bytes),
  content: `picture ${mediaId}`,
  ...over,
});

describe('§1 recently shown images, before each call', () => {
  it('the two most recent images of the history rows, oldest first; audio and text rows are not images', () => {
    const a = ref('a', png);
    const b = ref('b', png);
    const c = ref('c', png);
    const audio = { ...ref('d', png), modality: 'audio' as const, mimeType: 'audio/ogg' };
    expect(recentImageReferences([{ media: a }, {}, { media: b }, { media: c }, { media: audio as never }, { media: null }])).toEqual([b, c]);
  });

  it('reads the bytes of this session only; too large, wrong format, unreadable, changed bytes and other sessions are not sent', async () => {
    const big = Buffer.alloc(IMAGE_LIMITS.maxBytes + 1);
    const media = store({
      ok1: { mimeType: 'image/png', bytes: png, meta: {} },
      ok2: { mimeType: 'image/webp', bytes: png, meta: {} },
      big: { mimeType: 'image/png', bytes: big, meta: {} },
      tiff: { mimeType: 'image/tiff', bytes: png, meta: {} },
      other: { mimeType: 'image/png', bytes: png, meta: {}, sessionId: 'elsewhere' },
      changed: { mimeType: 'image/png', bytes: Buffer.from('89504e470d0a1a0a0000000d4948445f', 'hex'), meta: {} },
    });
    const two = await readRecentImages([ref('ok1', png), ref('ok2', png, { mimeType: 'image/webp', content: undefined })], media, scope);
    expect(two.images).toEqual([
      { mediaId: 'ok1', description: 'picture ok1' },
      { mediaId: 'ok2', description: '' },
    ]);
    expect(two.inline.get('ok2')).toEqual({ mimeType: 'image/webp', data: png.toString('base64') });
    for (const r of [ref('big', big), ref('tiff', png, { mimeType: 'image/tiff' }), ref('other', png), ref('missing', png), ref('changed', png)])
      expect(await readRecentImages([r], media, scope)).toEqual({ images: [], inline: new Map() });
    expect(IMAGE_LIMITS.maxBytes).toBe(3_750_000);
  });

  it('a store that cannot be reached fails the call (tried again later) rather than leaving the image out of the request', async () => {
    const down: MediaStore = {
      put: async () => randomUUID(),
      get: async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      },
    };
    await expect(readRecentImages([ref('a', png)], down, scope)).rejects.toMatchObject({ category: 'unavailable' });
    const broken: MediaStore = { put: down.put, get: async () => Promise.reject(new Error('not JSON')) };
    expect((await readRecentImages([ref('a', png)], broken, scope)).images).toEqual([]);
  });

  it('the message lists exactly the images attached; the bytes go on after the hooks, and a hook that rewrote the text drops them', async () => {
    const params = (recentImages: RecentImage[]): BuildContextParams => ({
      locale: 'en',
      runtime: { pluginId: 'n', runtimeId: 'n', outputKind: 'story', body: 'Tell.', history: {}, stageIndex: 0 },
      history: [],
      playerInput: { messageId: 'm', text: 'look' },
      recentImages,
    });
    const ctx = await buildContext(
      params([
        { mediaId: 'a', description: 'a red door' },
        { mediaId: 'b', description: '' },
      ]),
    );
    const at = ctx.messageSections.indexOf('recent-images');
    expect(ctx.messages[at].content).toBe('The images most recently shown to the player are attached, oldest first:\n1. a red door\n2. (no description)');
    expect(ctx.messages[at + 1]).toEqual({ role: 'user', content: 'look' });
    const inline = new Map([
      ['a', { mimeType: 'image/png' as const, data: 'AAAA' }],
      ['b', { mimeType: 'image/gif' as const, data: 'BBBB' }],
    ]);
    const plain = ctx.messages.map((m) => ({ role: m.role, content: m.content }));
    const out = attachImages(plain, ctx, inline);
    expect(out[at].images).toEqual([inline.get('a'), inline.get('b')]);
    expect(out.filter((m) => m.images)).toHaveLength(1);
    expect(imageTokens(ctx.messages)).toBe(3_000); // the budget counts 1,500 tokens per image
    const rewritten = attachImages([...plain.slice(0, at), { role: 'user', content: 'hooked' }, ...plain.slice(at + 1)], ctx, inline);
    expect(rewritten.some((m) => m.images)).toBe(false);
    // no image read: no message at all (a text-only model)
    expect((await buildContext(params([]))).messageSections).not.toContain('recent-images');
    // a structured runtime never gets it
    const structured = await buildContext({ ...params([{ mediaId: 'a', description: 'x' }]), runtime: { ...params([]).runtime, outputKind: 'structured' } });
    expect(structured.messageSections).not.toContain('recent-images');
  });

  it('traces record lengths, never bytes', () => {
    const body = new OpenAIChatAdapter({ apiKey: 'k' }).buildRequest({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'x', images: [{ mimeType: 'image/png', data: png.toString('base64') }] }],
    });
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
