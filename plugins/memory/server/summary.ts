import type { Locale, PluginSdk } from '../../../libs/plugins-sdk';
import type { MemoryEdit } from './edit';

/** The player's one-line summary helper (`ctx.sdk`). */
type Sdk = Pick<PluginSdk, 'clipLine'>;
/** The longest summary line (code points). */
const SUMMARY_MAX = 200;
/** The longest text of a block shown in a summary (code points). */
const TEXT_MAX = 80;

/**
 * One line for the player, the block by its label: "Courier's notes: + Promised Mira …" (an
 * append), "…: Promised … → Delivered …" (a replace), "…: cleared" (a clear).
 */
export function editSummary(sdk: Sdk, label: string, edit: MemoryEdit, locale: Locale): string {
  const zh = locale === 'zh-Hans';
  const head = `${sdk.clipLine(label, 40)}${zh ? '：' : ': '}`;
  const body =
    edit.kind === 'append'
      ? `+ ${sdk.clipLine(edit.line, TEXT_MAX)}`
      : edit.kind === 'replace'
        ? `${sdk.clipLine(edit.old, TEXT_MAX / 2)} → ${sdk.clipLine(edit.new, TEXT_MAX)}`
        : zh
          ? '已清空'
          : 'cleared';
  return sdk.clipLine(head + body, SUMMARY_MAX);
}
