import { InvalidEventError } from '..';
import { toLogEntry } from '../event-store';

const row = (type: string, data: unknown) => ({
  global_position: '7',
  tenant_id: 't1',
  stream_id: 's1',
  stream_version: 3,
  type,
  data,
  metadata: {},
  recorded_at: '2026-01-02T03:04:05.000Z',
});

describe('toLogEntry', () => {
  it('parses an entry once: every projection decoding it gets the same event', () => {
    const data = { executionId: 'e1', turnId: 'u1', messageId: 'm1', text: 'hello' };
    const entry = toLogEntry(row('player-input.submitted@1', data));
    const first = entry.decode();
    expect(first).toEqual({
      globalPosition: 7,
      tenantId: 't1',
      streamId: 's1',
      streamVersion: 3,
      type: 'player-input.submitted@1',
      data,
      metadata: {},
      recordedAt: '2026-01-02T03:04:05.000Z',
    });
    expect(entry.decode()).toBe(first);
  });

  it('throws the same error on each decode of an entry its schema does not read', () => {
    const entry = toLogEntry(row('player-input.submitted@1', { executionId: 'e1' }));
    const thrown = () => {
      try {
        entry.decode();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const first = thrown();
    expect(first).toBeInstanceOf(Error);
    expect(thrown()).toBe(first);
  });

  it('refuses an entry of an unknown type', () => {
    expect(() => toLogEntry(row('no.such@1', {})).decode()).toThrow(InvalidEventError);
  });
});
