import { truncateText } from '../text';
import type { Locale } from '../plugins-sdk';
import { fixedText } from './fixed-text';
import type { RecentImage } from './types';

/** Spec §1 "Images that have been shown": the most an image's content description keeps (code points, whole graphemes). */
export const IMAGE_CONTENT_MAX_CHARS = 600;
/** At most this many images in the recent-images message of a call. */
export const RECENT_IMAGES_MAX = 2;
/** The budget estimate of one attached image, in tokens. */
export const IMAGE_TOKENS = 1_500;

/** Whitespace, line and paragraph separators and other control characters: folded into one space. */
const FOLD = /[\s\p{Cc}]+/gu;

/**
 * What an image contains, as its description tells it: `meta.caption`, else `meta.prompt`, folded
 * onto one line and cut to 600 code points on a grapheme boundary; null when neither has text.
 */
export function imageContent(meta: { caption?: string; prompt?: string }): string | null {
  for (const text of [meta.caption, meta.prompt]) {
    const folded = (text ?? '').replace(FOLD, ' ').trim();
    if (folded !== '') return truncateText(folded, IMAGE_CONTENT_MAX_CHARS).trimEnd();
  }
  return null;
}

/**
 * The text of an image's description row in the history (sourceType `system`, role `user`): one
 * sentence saying an image was shown to the player here, and what it contains when that is known.
 * No media id, session id, time or path: the row never changes, so the history prefix stays cached.
 */
export function imageDescription(locale: Locale, content: string | null): string {
  return fixedText(locale).imageShown(content);
}

/** The text of the recent-images message: a title, then each attached image's content, oldest first. */
export function recentImagesText(locale: Locale, images: readonly RecentImage[]): string {
  const t = fixedText(locale);
  return [t.recentImagesTitle, ...images.map((image, i) => t.recentImageLine(i + 1, image.description === '' ? null : image.description))].join('\n');
}

/** The budget estimate of the images a request's messages carry (references or inline bytes): 1,500 tokens each. */
export function imageTokens(messages: readonly { images?: readonly unknown[] }[]): number {
  return messages.reduce((n, m) => n + (m.images?.length ?? 0), 0) * IMAGE_TOKENS;
}
