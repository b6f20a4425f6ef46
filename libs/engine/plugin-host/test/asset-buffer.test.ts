import { createHash } from 'node:crypto';
import { validateEvent } from '../../../events';
import { AssetBuffer, assetEvents, MAX_ASSETS_PER_RUN } from '../asset-buffer';

const png = Buffer.from('89504e470d0a1a0a', 'hex');
const ref = { executionId: 'e', turnId: 't', attempt: 1, pluginId: 'p', runtimeId: 'r', step: 1, toolCallId: 'call-1' };

describe('ctx.assets.generate (AssetBuffer)', () => {
  it('keeps a copy of each submission with a new media id, in submission order', async () => {
    const buffer = new AssetBuffer('painter');
    const bytes = Buffer.from(png);
    const { mediaId } = await buffer.assets().generate({ modality: 'image', mimeType: 'image/png', bytes, meta: { caption: 'a door' } });
    bytes.fill(0); // the plugin reuses its buffer: the stored copy does not change
    await buffer.assets().generate({ modality: 'audio', mimeType: 'audio/ogg', bytes: new Uint8Array([1, 2, 3]) });
    const [image, audio] = buffer.submitted();
    expect(image).toEqual({ mediaId, sourcePluginId: 'painter', modality: 'image', mimeType: 'image/png', bytes: png, meta: { caption: 'a door' } });
    expect(audio.meta).toEqual({});
    expect(mediaId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    ['another modality', { modality: 'text', mimeType: 'text/plain', bytes: png }, /modality: must be one of image, audio, video/],
    ['a MIME type of another modality', { modality: 'image', mimeType: 'audio/ogg', bytes: png }, /mimeType: must be a image\/… MIME type/],
    ['an upper-case MIME type', { modality: 'image', mimeType: 'IMAGE/PNG', bytes: png }, /mimeType/],
    ['bytes that are not a Uint8Array', { modality: 'image', mimeType: 'image/png', bytes: 'iVBOR' }, /bytes: must be a Uint8Array/],
    ['no bytes', { modality: 'image', mimeType: 'image/png', bytes: Buffer.alloc(0) }, /bytes: must hold 1 to/],
    ['U+0000 in the meta', { modality: 'image', mimeType: 'image/png', bytes: png, meta: { caption: 'a\u0000b' } }, /meta: caption: must not contain U\+0000/],
    ['a caption over 4,000 characters', { modality: 'image', mimeType: 'image/png', bytes: png, meta: { caption: 'x'.repeat(4_001) } }, /meta: caption/],
    ['an unknown meta field', { modality: 'image', mimeType: 'image/png', bytes: png, meta: { title: 'x' } }, /meta/],
  ])('refuses %s', async (_label, asset, message) => {
    const buffer = new AssetBuffer('painter');
    await expect(buffer.assets().generate(asset as never)).rejects.toThrow(message);
    expect(buffer.submitted()).toEqual([]);
  });

  it(`at most ${MAX_ASSETS_PER_RUN} per run, and none after the run ended`, async () => {
    const buffer = new AssetBuffer('painter');
    const one = () => buffer.assets().generate({ modality: 'image', mimeType: 'image/png', bytes: png });
    for (let i = 0; i < MAX_ASSETS_PER_RUN; i++) await one();
    await expect(one()).rejects.toThrow(/more than 8 assets/);
    buffer.close();
    await expect(one()).rejects.toThrow(/after the run ended/);
    expect(buffer.submitted()).toHaveLength(MAX_ASSETS_PER_RUN);
  });

  it('the events reference the bytes (length, sha256), never carry them; an image has its description row, audio none', async () => {
    const buffer = new AssetBuffer('painter');
    await buffer.assets().generate({ modality: 'image', mimeType: 'image/png', bytes: png, meta: { prompt: 'a red\ndoor' } });
    await buffer.assets().generate({ modality: 'audio', mimeType: 'audio/ogg', bytes: png, meta: { caption: 'a chime' } });
    const [image, audio] = assetEvents(ref, 'zh-Hans', buffer.submitted());
    for (const e of [image, audio]) expect(validateEvent(e)).toEqual(e);
    expect(image.type === 'asset.generated@1' && image.data).toMatchObject({
      media: { modality: 'image', byteLength: png.length, sha256: createHash('sha256').update(png).digest('hex'), content: 'a red door' },
      description: '此处向玩家展示了一张图片，内容：a red door',
    });
    expect(JSON.stringify(image)).not.toContain(png.toString('base64'));
    expect(audio.type === 'asset.generated@1' && [audio.data.description, audio.data.descriptionMessageId, audio.data.media.content]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});
