import { z } from 'zod';
import { API_ROUTES, type ApiRoute, IDEMPOTENCY_KEY, type SuccessResponse } from './routes';
import { ErrorBody, NAMED_SCHEMAS, type SchemaMeta, schemas } from './schemas';

/** A JSON Schema or OpenAPI object, as plain JSON. */
type JsonObject = Record<string, unknown>;

const COMPONENT = '#/components/schemas/';

/** zod → JSON Schema 2020-12 (the dialect of OpenAPI 3.1), as a request would be written (`io: 'input'`: defaults optional, transforms' input side). */
const jsonSchemaOptions = {
  target: 'draft-2020-12',
  io: 'input',
  // refinements (not blank, well-formed Unicode, ...) have no JSON Schema: the document states them in descriptions
  unrepresentable: 'any',
  uri: (id: string) => `${COMPONENT}${id}`,
  // `z.int()` says "a safe integer" with two 16-digit bounds on every field: "integer" says enough
  override: ({ jsonSchema }: { jsonSchema: JsonObject }) => {
    if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  },
} as const;

/** Drops what JSON Schema puts at the top of a document but an OpenAPI schema object must not repeat (`$schema`, `$id`). */
function asSchemaObject(schema: JsonObject): JsonObject {
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  return rest;
}

const INLINE = '__inline';

/**
 * The named schemas (and `inline`, when given) converted together, referring to each other by `$ref`.
 * One registry conversion, so the fields' own `.meta()` (descriptions, lengths: zod's global
 * registry) are kept as well as the names.
 */
function convert(inline?: z.ZodType): Record<string, JsonObject> {
  const registry = z.registry<SchemaMeta>();
  for (const { schema, meta } of NAMED_SCHEMAS) registry.add(schema, meta);
  if (inline) registry.add(inline, { id: INLINE });
  const converted = z.toJSONSchema(registry, jsonSchemaOptions) as { schemas: Record<string, JsonObject> };
  if ('__shared' in converted.schemas) throw new Error('an unnamed schema is used in two places: name it in openapi/schemas.ts');
  // the registry's own descriptions (zod reads only the ids from it)
  const descriptions = new Map(NAMED_SCHEMAS.map(({ meta }) => [meta.id, meta.description]));
  return Object.fromEntries(
    Object.entries(converted.schemas).map(([id, s]) => {
      const description = descriptions.get(id);
      return [id, { ...(description ? { description } : {}), ...asSchemaObject(s) }];
    }),
  );
}

/** The components: every named schema. */
const componentSchemas = (): Record<string, JsonObject> => convert();

/** A schema inline (a named one becomes a `$ref`). */
function schemaOf(schema: z.ZodType): JsonObject {
  const id = schemas.get(schema)?.id;
  return id ? { $ref: `${COMPONENT}${id}` } : convert(schema)[INLINE];
}

function success(response: SuccessResponse): JsonObject {
  const content =
    'json' in response.body
      ? { 'application/json': { schema: schemaOf(response.body.json) } }
      : { [response.body.raw.mediaType]: { schema: { type: 'string', ...(response.body.raw.mediaType.startsWith('text/') ? {} : { format: 'binary' }) } } };
  const headers = response.headers
    ? Object.fromEntries(Object.entries(response.headers).map(([name, h]) => [name, { description: h.description, schema: schemaOf(h.schema) }]))
    : undefined;
  return { description: response.description, ...(headers ? { headers } : {}), content };
}

function errorResponse(status: number, description: string): JsonObject {
  return {
    description,
    ...(status === 503 ? { headers: { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } } } } : {}),
    content: { 'application/json': { schema: { $ref: `${COMPONENT}${schemas.get(ErrorBody)!.id}` } } },
  };
}

function parameters(route: ApiRoute): JsonObject[] {
  const path = (route.pathParams ?? []).map((p) => ({ name: p.name, in: 'path', required: true, description: p.description, schema: schemaOf(p.schema) }));
  const query = Object.entries(route.query?.shape ?? {}).map(([name, schema]) => {
    const field = schema as z.ZodType;
    return { name, in: 'query', required: !field.safeParse(undefined).success, schema: schemaOf(field) };
  });
  const header = route.idempotent
    ? [
        {
          name: IDEMPOTENCY_KEY.name,
          in: 'header',
          required: false,
          description: 'Makes the request safe to retry: a repeat with the same key answers the first answer (`Idempotent-Replayed: true`).',
          schema: schemaOf(IDEMPOTENCY_KEY.schema),
        },
      ]
    : [];
  const ifMatch = route.ifMatch
    ? [
        {
          name: 'If-Match',
          in: 'header',
          required: true,
          description: 'The revision this change is made on, as its `ETag` gave it (`"3"`).',
          schema: { type: 'string', pattern: '^(W/)?"?[1-9][0-9]*"?$' },
        },
      ]
    : [];
  return [...path, ...query, ...header, ...ifMatch];
}

function operation(route: ApiRoute): JsonObject {
  const params = parameters(route);
  const responses: Record<string, JsonObject> = {};
  for (const [status, response] of Object.entries(route.responses)) responses[status] = success(response);
  for (const [status, error] of Object.entries(route.errors)) if (error) responses[status] ??= errorResponse(Number(status), error.description);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(route.auth ? { security: [{ apiKey: [] }] } : { security: [] }),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body) } } } } : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the HTTP API, built from `API_ROUTES` and the zod schemas the routes
 * validate with (pure: the same document for every engine).
 */
export function buildOpenApiDocument(routes: readonly ApiRoute[] = API_ROUTES): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    if (item[route.method]) throw new Error(`${route.method.toUpperCase()} ${route.path} is listed twice`);
    item[route.method] = operation(route);
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Covel engine API',
      version: '1',
      description:
        'The HTTP API of the Covel engine: sessions, player inputs, executions, and what the model saw. Every `/v1` route needs `Authorization: Bearer <tenant api key>`; another tenant’s things answer 404. Errors share one body (`Error`): a stable `code`, and on invalid input `issues` naming each field path.',
    },
    tags: [
      { name: 'sessions', description: 'Sessions, their inputs and what the model saw.' },
      { name: 'worlds', description: 'A tenant’s worlds (and the deployment’s built-in ones, read-only).' },
      { name: 'executions', description: 'The turns running in the background.' },
      { name: 'limits', description: 'The tenant’s request rate, executions in flight and spend budget.' },
      { name: 'usage', description: 'What the tenant’s model calls used: calls, tokens, est. cost.' },
      { name: 'health', description: 'Probes (no API key).' },
      { name: 'docs', description: 'This document and its rendered page (no API key).' },
      { name: 'inspector', description: 'The web prompt inspector’s page and files (no API key: the page asks for it).' },
    ],
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'The tenant’s API key (`npm run tenant:create`).' } },
    },
  };
}
