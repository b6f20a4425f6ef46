/**
 * Step 4: the parsed JSON against its spec. `spec` picks the schema (`chara_card_v2` or
 * `chara_card_v3`); anything else, a V1 card (no `spec`) included, is `UNSUPPORTED_SPEC`. A V3
 * card's `spec_version` may be any version from 3.0 on (the V3 spec asks importers to read newer
 * cards); a V2 card's is `2.0` or absent. Schema errors name each field's path.
 */
import type { z } from 'zod';
import { BODY, type CardFailure, type CardIssue, dottedPath, failure } from './result';
import { CharacterCardV2, CharacterCardV3 } from './schema';

type Validated = { ok: true; version: 'v2'; card: CharacterCardV2 } | { ok: true; version: 'v3'; card: CharacterCardV3 } | CardFailure;

const zodIssues = (error: z.ZodError): CardIssue[] => error.issues.map((i) => ({ path: dottedPath(i.path), message: i.message }));

const describe = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : v === null ? 'null' : typeof v);

export function validateCard(value: unknown): Validated {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return failure('INVALID_CARD', { path: BODY, message: `expected a JSON object, got ${Array.isArray(value) ? 'an array' : describe(value)}` });
  const spec = Object.hasOwn(value, 'spec') ? (value as { spec: unknown }).spec : undefined;
  const specVersion = Object.hasOwn(value, 'spec_version') ? (value as { spec_version: unknown }).spec_version : undefined;
  if (spec === 'chara_card_v2') {
    if (specVersion !== undefined && specVersion !== '2.0')
      return failure('UNSUPPORTED_SPEC', { path: 'spec_version', message: `a chara_card_v2 card has spec_version "2.0", not ${describe(specVersion)}` });
    const parsed = CharacterCardV2.safeParse(value);
    return parsed.success ? { ok: true, version: 'v2', card: parsed.data } : failure('INVALID_CARD', zodIssues(parsed.error));
  }
  if (spec === 'chara_card_v3') {
    if (typeof specVersion !== 'string' || !/^\d+(\.\d+)?$/.test(specVersion) || Number(specVersion) < 3)
      return failure('UNSUPPORTED_SPEC', {
        path: 'spec_version',
        message: `a chara_card_v3 card has spec_version "3.0" or later, not ${describe(specVersion)}`,
      });
    const parsed = CharacterCardV3.safeParse(value);
    return parsed.success ? { ok: true, version: 'v3', card: parsed.data } : failure('INVALID_CARD', zodIssues(parsed.error));
  }
  const v1 = spec === undefined && Object.hasOwn(value, 'first_mes');
  return failure('UNSUPPORTED_SPEC', {
    path: 'spec',
    message: v1
      ? 'a Character Card V1 (no "spec"): only chara_card_v2 and chara_card_v3 cards are read'
      : `expected "chara_card_v2" or "chara_card_v3", got ${spec === undefined ? 'no spec' : describe(spec)}`,
  });
}
