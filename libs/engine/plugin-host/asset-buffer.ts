import { createHash, randomUUID } from 'node:crypto';
import { imageContent, imageDescription } from '../../context';
import { EngineError } from '../../errors';
import { AssetMeta, AssetModality, MAX_ASSET_BYTES, type MediaStore, MIME_TYPE_PATTERN, type NewEvent } from '../../events';
import type { Assets, Locale } from '../../plugins-sdk';

/** How many assets one tool call or function run may generate. */
export const MAX_ASSETS_PER_RUN = 8;

/** A `ctx.assets.generate` the engine refuses: a bad modality, MIME type, bytes or meta, too many, or after the run. */
export class AssetRefusedError extends EngineError {
  readonly code = 'PLUGIN_ASSET_REFUSED';
  readonly category = 'invalid';
  constructor(pluginId: string, detail: string) {
    super(`plugin ${pluginId}: ctx.assets.generate ${detail}`);
  }
}

/** An asset a run submitted: its bytes (a copy) until they are stored, and its media id. */
export interface GeneratedAsset {
  mediaId: string;
  /** The plugin whose tool or function submitted it. */
  sourcePluginId: string;
  modality: 'image' | 'audio' | 'video';
  mimeType: string;
  bytes: Buffer;
  meta: { caption?: string; prompt?: string };
}

/**
 * The assets one tool call or function run generates (`ctx.assets`): checked and copied when
 * submitted, kept until the run returns. The run's caller stores the bytes of a successful run
 * (`storeAssets`) and then appends their `asset.generated@1` events with its outcome; a run that
 * fails drops them, so nothing references what it submitted.
 */
export class AssetBuffer {
  private readonly generated: GeneratedAsset[] = [];
  private closed = false;

  constructor(private readonly pluginId: string) {}

  /** The `ctx.assets` of the run. */
  assets(): Assets {
    return Object.freeze({ generate: async (asset: unknown) => ({ mediaId: this.submit(asset) }) });
  }

  close(): void {
    this.closed = true;
  }

  submitted(): readonly GeneratedAsset[] {
    return this.generated;
  }

  private submit(asset: unknown): string {
    const refuse = (detail: string) => new AssetRefusedError(this.pluginId, detail);
    if (this.closed) throw refuse('after the run ended: nothing is stored');
    if (typeof asset !== 'object' || asset === null) throw refuse('needs { modality, mimeType, bytes, meta }');
    const a = asset as Record<string, unknown>;
    const modality = AssetModality.safeParse(a.modality);
    if (!modality.success) throw refuse(`modality: must be one of ${AssetModality.options.join(', ')}`);
    if (typeof a.mimeType !== 'string' || !MIME_TYPE_PATTERN.test(a.mimeType) || a.mimeType.split('/')[0] !== modality.data)
      throw refuse(`mimeType: must be a ${modality.data}/… MIME type in lower case (got ${JSON.stringify(a.mimeType)})`);
    if (!(a.bytes instanceof Uint8Array)) throw refuse('bytes: must be a Uint8Array (or a Buffer)');
    if (a.bytes.byteLength === 0 || a.bytes.byteLength > MAX_ASSET_BYTES) throw refuse(`bytes: must hold 1 to ${MAX_ASSET_BYTES} bytes`);
    const meta = AssetMeta.safeParse(a.meta ?? {});
    if (!meta.success) throw refuse(`meta: ${meta.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
    if (this.generated.length >= MAX_ASSETS_PER_RUN) throw refuse(`more than ${MAX_ASSETS_PER_RUN} assets in one run`);
    const mediaId = randomUUID();
    this.generated.push({
      mediaId,
      sourcePluginId: this.pluginId,
      modality: modality.data,
      mimeType: a.mimeType,
      bytes: Buffer.from(a.bytes), // a copy: the plugin may reuse its buffer
      meta: meta.data,
    });
    return mediaId;
  }
}

/** Stores the bytes of a successful run's assets, before their events are appended (an event never references missing bytes). */
export async function storeAssets(media: MediaStore, scope: { tenantId: string; sessionId: string }, assets: readonly GeneratedAsset[]): Promise<void> {
  for (const a of assets) await media.put({ ...scope, mediaId: a.mediaId, mimeType: a.mimeType, bytes: a.bytes, meta: a.meta });
}

/**
 * The `asset.generated@1` events of a run's assets, in submission order: each references its bytes
 * (id, type, length, sha256) and carries the ids of the rows the commit writes — the message the
 * player sees and, for an image, its description row with its text in the session's language.
 */
export function assetEvents(
  ref: { executionId: string; turnId: string; attempt: number; pluginId: string; runtimeId: string; step?: number; toolCallId?: string },
  locale: Locale,
  assets: readonly GeneratedAsset[],
): NewEvent[] {
  return assets.map((a) => {
    const content = a.modality === 'image' ? imageContent(a.meta) : null;
    return {
      type: 'asset.generated@1',
      data: {
        ...ref,
        sourcePluginId: a.sourcePluginId,
        media: {
          mediaId: a.mediaId,
          modality: a.modality,
          mimeType: a.mimeType,
          byteLength: a.bytes.byteLength,
          sha256: createHash('sha256').update(a.bytes).digest('hex'),
          ...(content !== null ? { content } : {}),
        },
        meta: a.meta,
        messageId: randomUUID(),
        ...(a.modality === 'image' ? { descriptionMessageId: randomUUID(), description: imageDescription(locale, content) } : {}),
      },
    };
  });
}
