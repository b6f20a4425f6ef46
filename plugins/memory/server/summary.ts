import type { Locale } from '../../../libs/plugins-sdk';
import type { MemoryEdit } from './edit';

/** The longest summary line (code points). */
export const SUMMARY_MAX = 200;
/** The longest text of a block shown in a summary (code points). */
const TEXT_MAX = 80;

/** `text` on one line, cut to `max` code points (never inside a surrogate pair), with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * One line for the player, the block by its label: "Courier's notes: + Promised Mira …" (an
 * append), "…: Promised … → Delivered …" (a replace), "…: cleared" (a clear).
 */
export function editSummary(label: string, edit: MemoryEdit, locale: Locale): string {
  const zh = locale === 'zh-Hans';
  const head = `${clip(label, 40)}${zh ? '：' : ': '}`;
  const body =
    edit.kind === 'append'
      ? `+ ${clip(edit.line, TEXT_MAX)}`
      : edit.kind === 'replace'
        ? `${clip(edit.old, TEXT_MAX / 2)} → ${clip(edit.new, TEXT_MAX)}`
        : zh
          ? '已清空'
          : 'cleared';
  return clip(head + body, SUMMARY_MAX);
}
