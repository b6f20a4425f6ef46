import { buildContext, imageContent, imageDescription, IMAGE_CONTENT_MAX_CHARS, type HistoryMessage } from '..';
import { codePointLength, isWellFormedText } from '../../text';

describe('§1 an image description row', () => {
  it('one sentence: an image was shown here, and what it contains (caption, else prompt); neither: only the first half', () => {
    expect(imageDescription('en', imageContent({ caption: 'A lighthouse at dusk.', prompt: 'ignored' }))).toBe(
      'An image was shown to the player here, showing: A lighthouse at dusk.',
    );
    expect(imageDescription('en', imageContent({ prompt: 'a lighthouse, oil painting' }))).toBe(
      'An image was shown to the player here, showing: a lighthouse, oil painting',
    );
    expect(imageDescription('en', imageContent({ caption: ' \n\t ', prompt: '' }))).toBe('An image was shown to the player here.');
    expect(imageDescription('en', imageContent({}))).toBe('An image was shown to the player here.');
    expect(imageDescription('zh-Hans', imageContent({ caption: '黄昏的灯塔' }))).toBe('此处向玩家展示了一张图片，内容：黄昏的灯塔');
    expect(imageDescription('zh-Hans', imageContent({}))).toBe('此处向玩家展示了一张图片。');
  });

  it('folded onto one line (line and paragraph separators, tabs, control characters)', () => {
    expect(imageContent({ caption: 'a\r\n\r\nred\u2028door\u0007\tajar  ' })).toBe('a red door ajar');
  });

  it('at most 600 characters, cut by code point on a grapheme boundary, never inside a surrogate pair or a ZWJ sequence', () => {
    const family = '👨‍👩‍👧';
    const long = 'x'.repeat(598) + family + 'tail';
    const cut = imageContent({ caption: long })!;
    expect(codePointLength(cut)).toBeLessThanOrEqual(IMAGE_CONTENT_MAX_CHARS);
    expect(cut).toBe('x'.repeat(598));
    const emoji = '🚪'.repeat(700); // 1,400 UTF-16 units
    const doors = imageContent({ prompt: emoji })!;
    expect(codePointLength(doors)).toBe(600);
    expect(isWellFormedText(doors)).toBe(true);
  });

  it('a description row is not a turn for maxTurns: rows between turns in the window stay with it', async () => {
    const row = (turnId: string, role: HistoryMessage['role'], sourceType: HistoryMessage['sourceType'], text: string): HistoryMessage => ({
      messageId: `${turnId}-${text}`,
      turnId,
      role,
      sourceType,
      pluginId: sourceType === 'runtime' ? 'n' : null,
      runtimeId: sourceType === 'runtime' ? 'n' : null,
      outputKind: sourceType === 'runtime' ? 'story' : null,
      text,
    });
    const history = [
      row('t1', 'user', 'player', 'input 1'),
      row('t1', 'assistant', 'runtime', 'story 1'),
      row('t2', 'user', 'player', 'input 2'),
      { ...row('t2', 'assistant', 'runtime', ''), outputKind: null }, // the message the player sees: no text
      row('t2', 'user', 'system', imageDescription('en', 'a red door')),
      row('t2', 'assistant', 'runtime', 'story 2'),
    ];
    const ctx = await buildContext({
      locale: 'en',
      runtime: { pluginId: 'n', runtimeId: 'n', outputKind: 'story', body: 'Tell.', history: { maxTurns: 1 }, stageIndex: 0 },
      history,
      playerInput: { messageId: 'm', text: 'go on' },
    });
    expect(ctx.messages.map((m) => m.content)).toEqual(['input 2', 'An image was shown to the player here, showing: a red door', 'story 2', 'go on']);
  });
});
