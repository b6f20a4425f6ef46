import { type CoalescerClock, DeltaCoalescer } from '../coalescer';
import { InProcessDeltaBus } from '../delta-bus';
import type { StoryDelta } from '../delta-bus';

/** A clock the test moves by hand: timers run when `advance` passes them. */
function fakeClock() {
  let now = 0;
  const timers = new Set<{ at: number; run: () => void }>();
  const clock: CoalescerClock = {
    now: () => now,
    setTimeout: (run, ms) => {
      const timer = { at: now + ms, run };
      timers.add(timer);
      return timer;
    },
    clearTimeout: (timer) => timers.delete(timer as { at: number; run: () => void }),
  };
  const advance = (ms: number) => {
    now += ms;
    for (const timer of [...timers].sort((a, b) => a.at - b.at)) {
      if (timer.at > now) continue;
      timers.delete(timer);
      timer.run();
    }
  };
  return { clock, advance, pending: () => timers.size };
}

function coalescer(options: { started?: boolean; maxChars?: number } = {}) {
  const { clock, advance, pending } = fakeClock();
  const emitted: { at: number; text: string }[] = [];
  const c = new DeltaCoalescer({ emit: (text) => emitted.push({ at: clock.now(), text }), windowMs: 50, maxChars: options.maxChars ?? 400, clock, ...options });
  return { c, emitted, advance, pending };
}

describe('DeltaCoalescer', () => {
  it('sends the first write at once, then at most one piece per window: the writes within it, concatenated', () => {
    const { c, emitted, advance } = coalescer();
    c.write('Once ');
    expect(emitted).toEqual([{ at: 0, text: 'Once ' }]);
    for (const word of ['upon ', 'a ', 'time']) {
      advance(10);
      c.write(word);
    }
    expect(emitted).toHaveLength(1); // 30 ms in: the window is not over
    advance(20);
    expect(emitted).toEqual([
      { at: 0, text: 'Once ' },
      { at: 50, text: 'upon a time' },
    ]);
    advance(200); // quiet: nothing to send
    c.write(', a dragon');
    expect(emitted.at(-1)).toEqual({ at: 250, text: ', a dragon' });
    const gaps = emitted.slice(1).map((e, i) => e.at - emitted[i].at);
    expect(gaps.every((gap) => gap >= 50)).toBe(true);
  });

  it('sends at once when maxChars have gathered, even within the window', () => {
    const { c, emitted, advance } = coalescer({ maxChars: 10 });
    c.write('a');
    advance(1);
    c.write('12345');
    c.write('67890'); // 10 gathered
    expect(emitted.map((e) => e.text)).toEqual(['a', '1234567890']);
    c.write('x');
    advance(50);
    expect(emitted.map((e) => e.text)).toEqual(['a', '1234567890', 'x']);
  });

  it('never ends a piece between the halves of a surrogate pair; the concatenation is the text written', () => {
    const { c, emitted, advance } = coalescer();
    const dragon = '🐉';
    c.write(`fire ${dragon[0]}`); // the provider's chunk ended inside the pair
    expect(emitted.map((e) => e.text)).toEqual(['fire ']);
    advance(60);
    c.write(`${dragon[1]} 灰の村`);
    expect(emitted.map((e) => e.text)).toEqual(['fire ', `${dragon} 灰の村`]);
    expect(emitted.map((e) => e.text).join('')).toBe(`fire ${dragon} 灰の村`);
  });

  it('end hands back the rest (not emitted), and nothing is emitted after it', () => {
    const { c, emitted, advance, pending } = coalescer();
    c.write('a');
    c.write('b');
    expect(c.end()).toBe('b');
    expect(pending()).toBe(0);
    advance(100);
    c.write('c');
    expect(emitted.map((e) => e.text)).toEqual(['a']);
  });

  it('not started (nobody listens) keeps everything; start sends it as one piece, and coalesces from there', () => {
    const { c, emitted, advance } = coalescer({ started: false });
    for (const word of ['The ', 'gate ', 'opens']) {
      c.write(word);
      advance(100);
    }
    expect(emitted).toEqual([]);
    c.start();
    expect(emitted).toEqual([{ at: 300, text: 'The gate opens' }]);
    c.write('.');
    advance(50);
    expect(emitted.map((e) => e.text)).toEqual(['The gate opens', '.']);
  });

  it('never started: end hands back nothing (nothing was published, nothing to finish)', () => {
    const { c, emitted } = coalescer({ started: false });
    c.write('unheard');
    expect(c.end()).toBe('');
    expect(emitted).toEqual([]);
  });
});

describe('InProcessDeltaBus', () => {
  it('publishes a call coalesced, numbered 1..n without a gap, the last piece at its end; recent keeps them', async () => {
    const bus = new InProcessDeltaBus();
    const heard: StoryDelta[] = [];
    const unsubscribe = await bus.subscribe('s', (d) => heard.push(d));
    const call = bus.open({ sessionId: 's', callId: 'c' });
    const words = Array.from({ length: 40 }, (_, i) => `word${i} `);
    for (const word of words) call.write(word); // within one window: the first at once, the rest at the end
    await call.end();
    expect(heard.map((d) => d.seq)).toEqual(heard.map((_, i) => i + 1));
    expect(heard.length).toBeLessThan(words.length);
    expect(heard.map((d) => d.text).join('')).toBe(words.join(''));
    expect(await bus.recent('c')).toEqual(heard);
    await unsubscribe();
    await bus.close();
  });
});
