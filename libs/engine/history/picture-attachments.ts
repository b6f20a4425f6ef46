import { createHash } from 'node:crypto';
import { type AssembledContext, RECENT_IMAGES_MAX, type RecentImage } from '../../context';
import { databaseUnavailable, type MediaReference, type MediaStore } from '../../events';
import type { ChatMessage, InlineImage } from '../../providers';

/** Spec §1: at most 2 images, each at most 3,750,000 raw bytes (5 MB in base64), PNG/JPEG/WebP/GIF only. */
export const IMAGE_LIMITS = {
  maxImages: RECENT_IMAGES_MAX,
  maxBytes: 3_750_000,
  formats: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const,
};

/** An image row of the committed history (its `media`): what the recent-images message may attach. */
export type ImageReference = MediaReference & { modality: 'image' };

/**
 * The images of the uncompacted history the recent-images message considers: the two most recent,
 * oldest first. The history read (turn_messages) and the rebuild's fold pass the same rows.
 */
export function recentImageReferences(rows: readonly { media?: MediaReference | null }[]): ImageReference[] {
  const images = rows.map((r) => r.media).filter((m): m is ImageReference => m != null && m.modality === 'image');
  return images.slice(-IMAGE_LIMITS.maxImages);
}

/** The images a call attaches: for the message (id and content) and, by id, their bytes inline. */
export interface ReadImages {
  images: RecentImage[];
  inline: ReadonlyMap<string, InlineImage>;
}

/**
 * Before a story runtime's call to a model that accepts images: reads the referenced images from
 * the MediaStore (this tenant's session only) and keeps those that can be sent — a format the
 * providers take, at most 3,750,000 bytes, the very bytes submitted (length and sha256). Those left
 * out keep only their description row in the history (an unreadable item too; a store that cannot be
 * reached at all fails the call instead, as any database read does). A rebuild reads them again the same way.
 */
export async function readRecentImages(
  references: readonly ImageReference[],
  media: MediaStore,
  scope: { tenantId: string; sessionId: string },
): Promise<ReadImages> {
  const images: RecentImage[] = [];
  const inline = new Map<string, InlineImage>();
  for (const ref of references.slice(-IMAGE_LIMITS.maxImages)) {
    if (!sendable(ref)) continue;
    // a store that cannot be reached now fails the call (the job is tried again): a request that
    // left the image out would be one the audit, reading the store later, could not rebuild
    const item = await media.get({ ...scope, mediaId: ref.mediaId }).catch((error: unknown) => {
      const unavailable = databaseUnavailable(error);
      if (unavailable) throw unavailable;
      return null;
    });
    if (!item || item.mimeType !== ref.mimeType || item.bytes.length !== ref.byteLength) continue;
    if (createHash('sha256').update(item.bytes).digest('hex') !== ref.sha256) continue;
    images.push({ mediaId: ref.mediaId, description: ref.content ?? '' });
    inline.set(ref.mediaId, { mimeType: ref.mimeType as InlineImage['mimeType'], data: item.bytes.toString('base64') });
  }
  return { images, inline };
}

function sendable(ref: ImageReference): boolean {
  return (IMAGE_LIMITS.formats as readonly string[]).includes(ref.mimeType) && ref.byteLength <= IMAGE_LIMITS.maxBytes;
}

/**
 * Puts the images on the request's recent-images message (after the PreLLMCall hooks, which see
 * text only): the user message whose text is the assembled message's, with the images its refs
 * name, in order. A hook that rewrote or removed that message's text removed its images with it.
 */
export function attachImages(messages: readonly ChatMessage[], context: AssembledContext, inline: ReadonlyMap<string, InlineImage>): ChatMessage[] {
  const at = context.messageSections.indexOf('recent-images');
  const assembled = at === -1 ? undefined : context.messages[at];
  if (!assembled?.images || inline.size === 0) return [...messages];
  const images = assembled.images.map((i) => inline.get(i.mediaId)).filter((i): i is InlineImage => i !== undefined);
  let done = false;
  return messages.map((m) => {
    if (done || m.role !== 'user' || m.content !== assembled.content || images.length === 0) return m;
    done = true;
    return { ...m, images };
  });
}
