import { join } from 'node:path';
import { buildContext, type BuildContextParams } from '../../../context';
import { loadPlugins, type Locale } from '../../../plugins-sdk';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';
import { advertisedEvents } from '..';

const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'tool-plugins');

describe('<available-events> (spec §6 "The event-emission notes")', () => {
  const catalog = new RuntimeCatalog(loadPlugins(FIXTURES));
  const keeper = catalog.find('ledger', 'keeper')!;

  const block = async (locale: Locale) => {
    const params: BuildContextParams = {
      locale,
      runtime: { pluginId: 'ledger', runtimeId: 'keeper', outputKind: 'none', body: 'Keep the ledger.', history: {}, stageIndex: null },
      history: [],
      playerInput: { messageId: 'u1', text: 'go' },
      eventCatalog: advertisedEvents(catalog, keeper),
    };
    const section = (await buildContext(params)).systemSections.find((s) => s.name === 'events-activation')!;
    return section.text;
  };

  it('lists each topic with its description and required fields; the complete schema only where references force it; the unavailable marker for an unreadable schema (en)', async () => {
    expect(await block('en')).toBe(
      [
        '<available-events>',
        'Call emit-event once per event. The tool definition lists the topics and their payload shapes.',
        '- fact.recorded: A fact was recorded in the ledger. (required: fact)',
        '- ledger.audited: The ledger was audited. (required: entries)',
        '  payload schema: {"type":"object","properties":{"entries":{"type":"array","items":{"$ref":"#/$defs/entry"}}},"required":["entries"],"$defs":{"entry":{"type":"object","properties":{"fact":{"type":"string"}},"required":["fact"]}}}',
        '- ledger.lost: The ledger was lost. [payload schema unavailable]',
        '</available-events>',
      ].join('\n'),
    );
  });

  it('the fixed notes in a Simplified Chinese session are Chinese; topics, tags and the marker are not translated', async () => {
    expect((await block('zh-Hans')).split('\n')).toEqual([
      '<available-events>',
      '每个事件调用一次 emit-event。工具定义列出了各个主题及其载荷结构。',
      '- fact.recorded: A fact was recorded in the ledger. (必填: fact)',
      '- ledger.audited: The ledger was audited. (必填: entries)',
      expect.stringMatching(/^ {2}载荷模式: \{"type":"object"/),
      '- ledger.lost: The ledger was lost. [payload schema unavailable]',
      '</available-events>',
    ]);
  });

  it('only a runtime with agent.advertiseEvents gets the catalogue', () => {
    expect(advertisedEvents(catalog, catalog.find('ledger', 'teller')!)).toEqual([]);
    expect(advertisedEvents(catalog, keeper).map((e) => e.topic)).toEqual(['fact.recorded', 'ledger.audited', 'ledger.lost']);
  });
});
