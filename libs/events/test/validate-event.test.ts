import { InvalidEventError, type NewEvent, validateEvent } from '..';

describe('validateEvent', () => {
  const input = (text: string): NewEvent => ({
    type: 'player-input.submitted@1',
    data: { executionId: 'e1', turnId: 'u1', messageId: 'm1', text },
  });

  it('gives a new frozen event with the parsed data, and gives an event it gave back as it is (no second parse)', () => {
    const built = input('hello');
    const valid = validateEvent(built);
    expect(valid).not.toBe(built);
    expect(valid).toEqual(built);
    expect(Object.isFrozen(valid)).toBe(true);
    // what a worker validated while building its group of appends is not parsed again by the store
    expect(validateEvent(valid)).toBe(valid);
  });

  it('keeps the event’s type and metadata with the parsed data (no metadata: none)', () => {
    const withMetadata = validateEvent({ ...input('hi'), metadata: { traceId: 't1' } });
    expect(withMetadata).toEqual({ type: 'player-input.submitted@1', data: input('hi').data, metadata: { traceId: 't1' } });
    expect(Object.keys(validateEvent(input('hi')))).toEqual(['type', 'data']);
  });

  it('parses an event it did not give every time: a built event changed after a check is checked again', () => {
    const built = input('hello');
    const first = validateEvent(built);
    expect(validateEvent(built)).not.toBe(first);
    (built.data as { text: unknown }).text = 42;
    expect(() => validateEvent(built)).toThrow(InvalidEventError);
  });
});
