import { createHash } from 'node:crypto';
import { truncateText } from '../text';

/**
 * The emulated model's answers to world creation (the shared templates `world-generation` and
 * `lore-repair` of `prompts/server`, spec §6), recognised by their data blocks — `<world-brief>`,
 * and `<world-lore>` with `<lore-problems>` — which every locale of the templates keeps: a valid
 * world (as JSON, in the template's shape) for any brief, in Chinese when the world's language is
 * Chinese and in English otherwise, and the lore to repair given back with its narrator-only
 * marker lines balanced and within the length the template names.
 */
export function worldCreationReply(input: {
  system?: string;
  transcript: readonly { role: string; content: string }[];
}): { kind: 'text'; text: string } | undefined {
  const system = [input.system ?? '', ...input.transcript.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => m.content)].join('\n');
  const lore = block(system, 'world-lore');
  if (lore !== null && block(system, 'lore-problems') !== null) return { kind: 'text', text: repairedLore(lore, loreLimit(system)) };
  const brief = block(system, 'world-brief');
  if (brief !== null) return { kind: 'text', text: JSON.stringify(emulatedWorld(brief, worldLanguage(system))) };
  return undefined;
}

const OPEN = '<!-- narrator-only -->';
const CLOSE = '<!-- /narrator-only -->';

/** A data block's text, XML-unescaped (the templates escape what they put in one); null when absent. */
function block(text: string, tag: string): string | null {
  const m = new RegExp(`<${tag}>\\n?([\\s\\S]*?)\\n?</${tag}>`).exec(text);
  return m ? m[1].replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&') : null;
}

/** The world's language as the template names it (the first backticked tag after the brief). */
function worldLanguage(system: string): 'zh' | 'en' {
  const after = system.slice(system.indexOf('</world-brief>'));
  const tag = /`([A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*)`/.exec(after)?.[1] ?? 'en';
  return tag.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

/** The longest the repaired lore may be, as the lore-repair template says it (after the lore block). */
function loreLimit(system: string): number {
  const after = system.slice(system.indexOf('</world-lore>'));
  const limits = [...after.matchAll(/(\d{3,7})\s*(?:characters|个字符)/g)].map((m) => Number(m[1]));
  return limits.length > 0 ? limits[limits.length - 1] : Number.MAX_SAFE_INTEGER;
}

/**
 * The lore with every marker line that does not pair dropped (an unclosed opening, a closing
 * without one) and, past `limit`, the other lines shortened from the end: marker lines are kept as
 * they are, in order (the template's rule).
 */
function repairedLore(lore: string, limit: number): string {
  const lines = lore.split('\n');
  const keep = lines.map(() => true);
  let openAt: number | null = null;
  lines.forEach((line, i) => {
    const marker = line.trim();
    if (marker === OPEN) {
      if (openAt !== null) keep[openAt] = false;
      openAt = i;
    } else if (marker === CLOSE) {
      if (openAt === null) keep[i] = false;
      openAt = null;
    }
  });
  if (openAt !== null) keep[openAt] = false;
  const kept = lines.filter((_, i) => keep[i]);
  const length = (text: string) => [...text].length;
  if (length(kept.join('\n')) <= limit) return kept.join('\n');
  const isMarker = (line: string) => line.trim() === OPEN || line.trim() === CLOSE;
  let budget = limit - kept.filter(isMarker).reduce((n, line) => n + length(line) + 1, 0);
  const out: string[] = [];
  for (const line of kept) {
    if (isMarker(line)) out.push(line);
    else if (budget > 1) {
      const cut = truncateText(line, budget - 1);
      out.push(cut);
      budget -= length(cut) + 1;
    }
  }
  return out.join('\n');
}

const NAMES = {
  en: ['Saltglass Reach', 'The Lantern Marches', 'Hollowmere', 'Cinderfall Crossing'],
  zh: ['盐镜滩', '灯火边境', '空湖镇', '烬落渡口'],
};

/** A small, valid world in the `world-generation` template's shape, chosen by a hash of the brief. */
function emulatedWorld(brief: string, language: 'zh' | 'en'): Record<string, unknown> {
  const digest = createHash('sha256').update(brief).digest();
  const name = NAMES[language][digest[0] % NAMES[language].length];
  const idea = truncateText(brief.replace(/\s+/g, ' ').trim(), 120);
  if (language === 'zh') {
    return {
      name,
      description: `一处古道与旧约交汇的边地，每个陌生人都会被问同一个问题。${idea ? `源自构想：“${idea}”。` : ''}`,
      tags: ['低魔奇幻', '悬疑', '慢热'],
      lore: [
        `${name}坐落在两条古道交汇之处。守关人向每位旅人收取一句真话作为通行费。`,
        '镇上的人相信雾里住着祖先，雾浓的夜晚没有人出门。',
        OPEN,
        '守关人其实早已忘记关卡守护的是什么；她害怕有人发现这一点。',
        CLOSE,
        '今年的雾来得比往年早，商队也迟迟未到。',
      ].join('\n'),
      characters: [
        { id: 'wayfarer', name: '行者', aliases: [], type: 'player', description: '刚到关口的旅人，带着一封没有署名的信。', fields: { grit: 3, standing: 2 } },
        {
          id: 'warden',
          name: '守关人伊素',
          aliases: ['伊素'],
          type: 'npc',
          description: '守关多年的老妇人，说话简短，从不说谎。',
          fields: { grit: 4, standing: 7 },
        },
      ],
      characterSchema: {
        type: 'object',
        properties: {
          grit: { type: 'integer', minimum: 1, maximum: 5, description: '坚韧：面对困境时不退缩的程度。' },
          standing: { type: 'integer', minimum: 0, maximum: 10, description: '声望：镇上的人有多信任此人。' },
        },
      },
      seats: [{ id: 'wayfarer', label: '行者', characterIds: ['wayfarer'], primary: true }],
      dimensions: [{ name: 'fog', description: '雾的浓度：越浓，越多秘密浮现。', schema: { type: 'integer', minimum: 0, maximum: 10 }, value: 3 }],
      entries: [{ id: 'toll', keys: ['通行费', '真话'], content: '通行费是一句真话；说谎的人会在雾里迷路。' }],
    };
  }
  return {
    name,
    description: `A frontier where old roads meet older promises, and every stranger is asked the same question.${idea ? ` Drawn from the brief “${idea}”.` : ''}`,
    tags: ['low fantasy', 'mystery', 'slow-burn'],
    lore: [
      `${name} stands where two old roads cross. The warden at the gate takes one true sentence from every traveller as the toll.`,
      'The townsfolk believe their ancestors live in the fog, and nobody goes out on a thick night.',
      OPEN,
      'The warden has long forgotten what the gate protects, and fears that someone will notice.',
      CLOSE,
      'This year the fog came early, and the caravans are late.',
    ].join('\n'),
    characters: [
      {
        id: 'wayfarer',
        name: 'Wayfarer',
        aliases: [],
        type: 'player',
        description: 'A traveller just arrived at the gate, carrying an unsigned letter.',
        fields: { grit: 3, standing: 2 },
      },
      {
        id: 'warden',
        name: 'Warden Isel',
        aliases: ['Isel'],
        type: 'npc',
        description: 'An old woman who has kept the gate for decades; she speaks briefly and never lies.',
        fields: { grit: 4, standing: 7 },
      },
    ],
    characterSchema: {
      type: 'object',
      properties: {
        grit: { type: 'integer', minimum: 1, maximum: 5, description: 'How little someone yields when things go wrong.' },
        standing: { type: 'integer', minimum: 0, maximum: 10, description: 'How far the town trusts them.' },
      },
    },
    seats: [{ id: 'wayfarer', label: 'The wayfarer', characterIds: ['wayfarer'], primary: true }],
    dimensions: [
      {
        name: 'fog',
        description: 'How thick the fog is: the thicker, the more secrets surface.',
        schema: { type: 'integer', minimum: 0, maximum: 10 },
        value: 3,
      },
    ],
    entries: [{ id: 'toll', keys: ['toll', 'true sentence'], content: 'The toll is one true sentence; a liar loses the road in the fog.' }],
  };
}
