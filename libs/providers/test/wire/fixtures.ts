import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Protocol } from '../..';

/**
 * A golden wire fixture: a request and/or a reply as a provider's public reference or official
 * SDK publishes it, the source named, what was adapted said, and what an adapter must read from it.
 */
const WireFixture = z
  .object({
    source: z.string().min(40),
    adapted: z.string().min(4),
    request: z.record(z.string(), z.unknown()).optional(),
    response: z.unknown().optional(),
    events: z
      .array(z.object({ event: z.string().optional(), data: z.unknown() }).strict())
      .min(1)
      .optional(),
    expect: z
      .object({
        text: z.string(),
        toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()) }).strict()),
        finishReason: z.string(),
        thinking: z.string().optional(),
        usage: z
          .object({ inputTokens: z.number(), outputTokens: z.number(), cachedInputTokens: z.number(), cacheCreationInputTokens: z.number().optional() })
          .strict(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .refine((f) => f.response === undefined || f.events === undefined, 'a fixture has a response or events, not both')
  .refine((f) => (f.expect === undefined) === (f.response === undefined && f.events === undefined), 'a reply comes with what an adapter reads from it')
  .refine((f) => f.request !== undefined || f.expect !== undefined, 'a fixture has a request, a reply or both');
export type WireFixture = z.infer<typeof WireFixture>;

const ROOT = join(__dirname, '..', 'fixtures', 'wire');

export type WireReplyFixture = WireFixture & { expect: NonNullable<WireFixture['expect']> };

/** Every fixture of a protocol's folder, by file name. */
export function wireFixtures(protocol: Protocol): [string, WireFixture][] {
  return readdirSync(join(ROOT, protocol))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f.replace(/\.json$/, ''), WireFixture.parse(JSON.parse(readFileSync(join(ROOT, protocol, f), 'utf8')))]);
}

/** The fixtures with a reply (a response or events), by file name. */
export const wireReplies = (protocol: Protocol) => wireFixtures(protocol).filter((e): e is [string, WireReplyFixture] => e[1].expect !== undefined);
