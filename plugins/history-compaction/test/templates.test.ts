import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPromptLoader, templateText } from '../../../libs/plugins-sdk';
import { TEMPLATE_NAMES } from '../server/templates';
import { loadProvider, PLUGIN_ROOT, ScriptedModel, stop, summary, textOf, turns } from './support';

const ROOT = join(PLUGIN_ROOT, 'prompts', 'server');
const files = (name: string) => ({ en: join(ROOT, `${name}.md`), 'zh-Hans': join(ROOT, `${name}.zh-Hans.md`) });
const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;
const placeholders = (text: string) => [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]))].sort();
const documented = (raw: string) => [...new Set([.../^\s*<!--([\s\S]*?)-->/.exec(raw)![1].matchAll(/^\s*\{\{\s*([^{}\s]+)\s*\}\}/gm)].map((m) => m[1]))].sort();
const tags = (text: string) => [...new Set([...text.matchAll(/^<([a-z][a-z-]*)>$/gm)].map((m) => m[1]))].sort();
const headings = (text: string) => [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);

describe.each(TEMPLATE_NAMES)('prompts/server/%s', (name) => {
  const raw = { en: readFileSync(files(name).en, 'utf8'), 'zh-Hans': readFileSync(files(name)['zh-Hans'], 'utf8') };
  const text = { en: templateText(raw.en), 'zh-Hans': templateText(raw['zh-Hans']) };

  it('exists in English (the default file) and Simplified Chinese, and nothing else', () => {
    expect(existsSync(files(name).en) && existsSync(files(name)['zh-Hans'])).toBe(true);
    expect(text['zh-Hans']).toMatch(/[\u4e00-\u9fff]/);
    expect(text.en).not.toMatch(/[\u4e00-\u9fff]/);
  });

  it('both locales use the same placeholders, each documented at the top, and the same data blocks and number of sections', () => {
    expect(placeholders(text.en).length).toBeGreaterThan(0);
    expect(placeholders(text['zh-Hans'])).toEqual(placeholders(text.en));
    expect(documented(raw.en)).toEqual(placeholders(text.en));
    expect(documented(raw['zh-Hans'])).toEqual(placeholders(text.en));
    expect(tags(text['zh-Hans'])).toEqual(tags(text.en));
    expect(headings(text['zh-Hans'])).toHaveLength(headings(text.en).length);
  });

  it('the loader serves the Chinese file to Simplified Chinese sessions and English to every other', () => {
    const loader = createPromptLoader(ROOT);
    for (const locale of ['zh-Hans', 'zh-CN', 'zh']) expect(loader.loadOrThrow(name, locale)).toBe(text['zh-Hans']);
    for (const locale of ['en', 'fr', 'zh-Hant']) expect(loader.loadOrThrow(name, locale)).toBe(text.en);
  });
});

describe('the templates a session reads', () => {
  const zh = (name: string) => templateText(readFileSync(files(name)['zh-Hans'], 'utf8'));
  const en = (name: string) => templateText(readFileSync(files(name).en, 'utf8'));
  const fill = (template: string, values: Record<string, string>) => template.replace(PLACEHOLDER, (_, key: string) => values[key]);
  // 8 old segments force a merge, so both kinds of call are made; 14 unprotected messages of 40 tokens: budget 140, merge budget 200
  const input = () => ({
    messages: turns(10),
    summaries: Array.from({ length: 8 }, (_, i) => summary(`s${i + 1}`, 100)),
    windows: { effective: 100_000, fastInput: 100_000 },
  });

  it('a zh-Hans session: the Chinese templates, the length in characters (one per token)', async () => {
    const { compact } = await loadProvider();
    const model = new ScriptedModel([stop('## 经过\n渡船到了对岸。'), stop('## 经过\n旅程开始了。')]);
    const result = await compact(input(), model, 'zh-Hans');
    const [segment, merge] = model.requests;
    expect(segment.system).toBe(fill(zh('segment-system'), { targetLength: '140' }));
    expect(segment.prompt).toMatch(/^<history>\n<message role="user" source="player">Player 1\./);
    expect(segment.prompt).toMatch(/<\/history>\n\n用不超过 140 字概括以上历史。$/);
    expect(merge.system).toBe(fill(zh('merge-system'), { targetLength: '200' }));
    expect(merge.prompt).toMatch(/<\/summaries>\n\n把以上摘要合并为一份不超过 200 字的摘要。$/);
    expect(result.summaries.map((s) => s.focusSections)).toEqual([['经过'], ['经过']]);
  });

  it('an English session: the English templates, the length in words (two per three tokens)', async () => {
    const { compact } = await loadProvider();
    const model = new ScriptedModel([stop(textOf(100, 'new')), stop(textOf(150, 'merged'))]);
    await compact(input(), model, 'en');
    expect(model.requests[0].system).toBe(fill(en('segment-system'), { targetLength: '93' }));
    expect(model.requests[1].system).toBe(fill(en('merge-system'), { targetLength: '133' }));
    expect(model.requests[0].prompt).toMatch(/Summarize the history above in at most 93 words\.$/);
  });
});
