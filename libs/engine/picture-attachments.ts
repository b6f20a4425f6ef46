import type { ContextMessage } from '../context';
import type { ChatMessage, InlineImage, ModelCapabilities } from '../providers';

/** Reads shown images' bytes (the media store of the deployment). */
export interface MediaStore {
  read(tenantId: string, mediaId: string): Promise<{ sessionId: string; mimeType: string; bytes: Buffer } | null>;
}

/** Spec §1: at most 2 images, each at most 3,750,000 raw bytes, PNG/JPEG/WebP/GIF only. */
export const IMAGE_LIMITS = {
  maxImages: 2,
  maxBytes: 3_750_000,
  formats: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const,
};

/**
 * Before each call: the recent-images message is kept only if this call's model accepts images;
 * then its images are read and sent inline as base64. An image over the limit, of another format,
 * unreadable, or from another session is not sent (its description stays in the history); a
 * message left with no image is dropped.
 */
export async function attachRecentImages(
  messages: readonly ContextMessage[],
  capabilities: ModelCapabilities,
  media: MediaStore,
  scope: { tenantId: string; sessionId: string },
): Promise<ChatMessage[]> {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (!m.images) {
      out.push({ role: m.role, content: m.content });
      continue;
    }
    if (!capabilities.imageInput) continue; // decided by capability, not by model name
    const inline: InlineImage[] = [];
    for (const ref of m.images.slice(-IMAGE_LIMITS.maxImages)) {
      const item = await media.read(scope.tenantId, ref.mediaId).catch(() => null);
      if (!item || item.sessionId !== scope.sessionId) continue;
      if (!(IMAGE_LIMITS.formats as readonly string[]).includes(item.mimeType) || item.bytes.length > IMAGE_LIMITS.maxBytes) continue;
      inline.push({ mimeType: item.mimeType as InlineImage['mimeType'], data: item.bytes.toString('base64') });
    }
    if (inline.length > 0) out.push({ role: m.role, content: m.content, images: inline });
  }
  return out;
}
