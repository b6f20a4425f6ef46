import { join } from 'node:path';
import { createPluginHarness, type PluginHarness, type PluginHarnessOptions } from '../../../libs/plugin-testing';

export const ROOT = join(__dirname, '..', '..', '..');
export const WORLD_INIT = join(__dirname, '..');
export const NARRATOR = join(ROOT, 'plugins', 'narrator');
export const EMBERBACK = join(ROOT, 'worlds', 'emberback');
export const TRACKER = 'world-init/dimension-tracker';

/** A harness with only the narrator and world-init (spec: load only the folders a suite needs). */
export function worldInitHarness(options: Omit<PluginHarnessOptions, 'plugins'>): Promise<PluginHarness> {
  return createPluginHarness({ plugins: [NARRATOR, WORLD_INIT], ...options });
}

/** The tracker's reply for one turn: its write (a successful one completes the runtime: `completesRuntime`). */
export const trackerTurn = (updates: { id: string; value: unknown }[]) => [{ tool: 'update-dimensions', args: { updates } }];

/** The `<tag>…</tag>` block of a text. */
export function blockOf(text: string, tag: string): string {
  // the block itself: a body may name the tag in prose before it
  const end = text.indexOf(`</${tag}>`);
  const start = end < 0 ? -1 : text.lastIndexOf(`<${tag}>`, end);
  if (start < 0 || end < 0) throw new Error(`no <${tag}> in:\n${text}`);
  return text.slice(start, end + tag.length + 3);
}
