import type { Locale } from '../../../libs/plugins-sdk';

/** The fixed text of the plugin's segments, per locale (the values themselves are data). */
export interface SegmentText {
  /** What `<world-dimensions>` is: the story's session segment `world-dimensions-intro` (the block itself comes with each turn). */
  worldHead: string;
  /** A value cut to a preview; `n` is the preview's length in characters. */
  preview(n: number): string;
  previewNote: string;
  omitted(count: number): string;
  rulesHead: string;
  trackedHead: string;
  constantHead: string;
  truncatedHead(count: number): string;
  /** What `<dimension-values>` is: the last line of `<dimension-rules>` (session), not of the turn block. */
  valuesHead: string;
  labels: { name: string; description: string; rule: string; schema: string };
}

const en: SegmentText = {
  worldHead:
    "<world-dimensions>, in the system message before the player's input: the world's dimensions as this turn begins (read-only during the turn), one per line: id, version and value as JSON.",
  preview: (n) => `preview, the first ${n} characters only, not complete JSON`,
  previewNote: 'A preview is not the whole value: read it in full with world-dimension-get by id (and a JSON pointer path).',
  omitted: (count) =>
    `${count} more ${count === 1 ? 'dimension is' : 'dimensions are'} not shown here for lack of space; not shown does not mean without a value. List them page by page with world-dimension-list and read one by id (and path) with world-dimension-get.`,
  rulesHead: 'The dimensions you keep up to date. Each tracked dimension has a rule for when and how it changes, and a JSON schema its value must match.',
  trackedHead: 'Tracked dimensions:',
  constantHead: 'Constant dimensions (no update rule: never change them):',
  truncatedHead: (count) =>
    `Truncated (${count} tracked ${count === 1 ? 'dimension' : 'dimensions'} whose rule and schema are not shown here; read them page by page with dimension-rule-get):`,
  valuesHead:
    "<dimension-values>, in the system message before the player's input: the current value of each tracked dimension (frozen for this turn), one per line: id: value as JSON.",
  labels: { name: 'name', description: 'description', rule: 'rule', schema: 'schema' },
};

const zhHans: SegmentText = {
  worldHead: '玩家输入之前的系统消息中的 <world-dimensions>：本回合开始时的世界维度（本回合内只读），每行一个：id、版本和值（JSON）。',
  preview: (n) => `预览，仅前 ${n} 个字符，不是完整的 JSON`,
  previewNote: '预览不是完整的值：用 world-dimension-get 按 id（以及 JSON 指针路径）读取完整值。',
  omitted: (count) =>
    `还有 ${count} 个维度因篇幅所限未在此列出；未列出不代表没有值。用 world-dimension-list 分页列出它们，用 world-dimension-get 按 id（以及路径）读取。`,
  rulesHead: '你负责维护的维度。每个被追踪的维度都有一条规则说明它何时、如何变化，以及它的值必须符合的 JSON schema。',
  trackedHead: '被追踪的维度：',
  constantHead: '常量维度（没有更新规则：永远不要修改）：',
  truncatedHead: (count) => `已截断（${count} 个被追踪维度的规则和 schema 未在此列出；用 dimension-rule-get 分页读取）：`,
  valuesHead: '玩家输入之前的系统消息中的 <dimension-values>：每个被追踪维度的当前值（本回合内冻结），每行一个：id: 值（JSON）。',
  labels: { name: '名称', description: '描述', rule: '规则', schema: 'schema' },
};

export const segmentText = (locale: Locale): SegmentText => (locale === 'zh-Hans' ? zhHans : en);
