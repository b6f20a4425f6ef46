export type EmulatorReply =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'sse'; events: { event?: string; data: string }[]; done?: string };

/** One wire format the emulator speaks. */
export interface EmulatorRoute {
  method: 'POST';
  path: string;
  handle(body: unknown, headers: Record<string, string | string[] | undefined>): EmulatorReply;
}
