import { z } from 'zod';
import { IDEMPOTENCY_KEY_HEADER, MAX_GENERATION_WAIT_MS } from '../../../libs/engine';
import { MAX_EXECUTION_WAIT_MS } from '../../../libs/events';
import { MAX_USAGE_RANGE_DAYS } from '../../../libs/usage';
import {
  ActivationBody,
  BranchSessionBody,
  CancelBody,
  CreateSessionBody,
  EditMessageBody,
  EmptyBody,
  ExecutionQuery,
  GenerateWorldBody,
  JsonValue,
  PreferencesPatchBody,
  ResumeBody,
  SelectAlternativeBody,
  SessionListQuery,
  SubmitInputBody,
  UsageQuery,
  WorldExportQuery,
  WorldListQuery,
  WorldQuery,
  WorldGenerationQuery,
  WorldRevisionBody,
  CreateKeyBody,
  CreateTenantBody,
} from '../bodies';
import { WorldDocument } from '../../../libs/plugins-sdk';
import { IdempotencyKeyHeader } from '../idempotency-key';
import { UUID_PATTERN } from '../uuid-param.pipe';
import { INSPECTOR_ASSETS } from '../inspector/inspector-page';
import { DOCS_ASSETS } from './docs-page';
import {
  appendConflict,
  bodyErrors,
  budgetErrors,
  type ErrorResponses,
  idempotencyErrors,
  operatorErrors,
  publicErrors,
  quarantinedViewErrors,
  tenantErrors,
} from './errors';
import {
  CallInspection,
  CancelledExecution,
  AcceptedInput,
  BranchedSession,
  CreatedSession,
  Execution,
  HealthReportSchema,
  LlmCall,
  Liveness,
  Message,
  PrefixReportRow,
  ResumedExecution,
  SessionPreferencesAnswer,
  SessionDetail,
  SessionSummary,
  SessionTurn,
  StartedExecution,
  SelectedAlternative,
  EditedMessage,
  RevertedTurns,
  TurnAlternatives,
  TurnAuditSchema,
  WorldAnswer,
  WorldPage,
  SessionWorldRevision,
  AcceptedWorldGeneration,
  WorldGenerationProgress,
  WorldGenerationAuditSchema,
  ApiKeySchema,
  ApiKeyList,
  CreatedApiKey,
  CreatedTenant,
  TenantList,
  UsageReportSchema,
  TenantLimitsAnswer,
  TenantLimitsBody,
} from './schemas';

/** A path parameter: its name in the path template, what it is, and its schema. */
export interface PathParam {
  name: string;
  description: string;
  schema: z.ZodType;
}

/** A success answer: a registered zod schema (JSON), or raw content of a media type. */
export type SuccessBody = { json: z.ZodType } | { raw: { mediaType: string } };

export interface SuccessResponse {
  description: string;
  body: SuccessBody;
  headers?: Record<string, { description: string; schema: z.ZodType }>;
}

/**
 * One HTTP route of the API, as the OpenAPI document describes it. `path` is the OpenAPI template
 * (`/v1/sessions/{id}/inputs`); the test `test/unit/api-openapi.test.ts` compares the method and path
 * of every entry here with the routes Nest registered, so a route without an entry fails it.
 */
export interface ApiRoute {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: 'sessions' | 'worlds' | 'executions' | 'usage' | 'limits' | 'health' | 'docs' | 'inspector' | 'keys' | 'admin';
  /** Needs `Authorization: Bearer <tenant api key>` (every `/v1` route); `operator`: the operator's `COVEL_ADMIN_API_KEY`. */
  auth: boolean | 'operator';
  pathParams?: PathParam[];
  /** The query the route validates (with the same schema as its pipe). */
  query?: z.ZodObject;
  /** Takes an optional `Idempotency-Key` header (a repeat answers the first answer, `Idempotent-Replayed: true`). */
  idempotent?: boolean;
  /** Takes an `If-Match` header naming the revision it changes (a world's `ETag`). */
  ifMatch?: 'required';
  /** The JSON body schema the route's ZodBodyPipe validates with (registered in schemas.ts). */
  body?: z.ZodType;
  responses: Record<number, SuccessResponse>;
  errors: ErrorResponses;
}

const uuid = z.string().regex(UUID_PATTERN);
const sessionIdParam: PathParam = { name: 'id', description: 'The session id (a UUID).', schema: uuid };
const turnIdParam: PathParam = { name: 'turnId', description: 'The turn id (a UUID).', schema: uuid };
const json = (schema: z.ZodType, description: string): SuccessResponse => ({ description, body: { json: schema } });

const idempotentHeaders: SuccessResponse['headers'] = {
  'Idempotent-Replayed': { description: '`true` when this answer repeats the first answer to the same `Idempotency-Key`.', schema: z.literal('true') },
};

const worldIdParam: PathParam = {
  name: 'id',
  description: 'The world id: a UUID for a tenant’s world, the folder’s name for a built-in one.',
  schema: z.string().regex(/^([a-z][a-z0-9-]{0,63}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/),
};
const worldHeaders: SuccessResponse['headers'] = {
  ETag: { description: 'The revision answered, quoted (`"3"`): send it as `If-Match` to change the world.', schema: z.string() },
  ...idempotentHeaders,
};
const worldWriteErrors = (codes: string[]): ErrorResponses => ({
  ...tenantErrors(['WORLD_NOT_FOUND']),
  ...bodyErrors(['INVALID_WORLD', 'INVALID_IF_MATCH', 'INVALID_IDEMPOTENCY_KEY']),
  ...idempotencyErrors,
  409: { description: `The world cannot change: ${[...codes, 'IDEMPOTENCY_KEY_TAKEN'].map((c) => `\`${c}\``).join(', ')}.` },
  413: { description: 'The body is larger than a world may be: `BODY_TOO_LARGE`, `WORLD_TOO_LARGE`.' },
});

/** A new revision of a world (`PUT`, `PATCH`): the errors of a write, and the conditions of `If-Match`. */
const worldRevisionErrors: ErrorResponses = {
  ...worldWriteErrors(['WORLD_ARCHIVED', 'WORLD_READ_ONLY']),
  412: { description: 'The world is no longer at the revision `If-Match` names: `WORLD_REVISION_MISMATCH`.' },
  428: { description: 'No `If-Match`: `WORLD_REVISION_REQUIRED`.' },
};

const jobIdParam: PathParam = { name: 'jobId', description: 'The world generation job id (a UUID).', schema: uuid };

/** World creation from a description (issue 29): the job, its progress and its audit. */
const WORLD_GENERATION_ROUTES: readonly ApiRoute[] = [
  {
    method: 'post',
    path: '/v1/worlds/generate',
    operationId: 'generateWorld',
    summary: 'Make a world from a description (a job: 202, a worker runs it)',
    description:
      'Recorded as `world-generation.requested@1` and enqueued; this process calls no model. A worker asks the slot’s model (default `story`) for the world under its JSON schema (the `world-generation` template of `prompts/server`), validates it, and on failure runs repair rounds (`lore-repair`, or the draft asked again with the problems; `COVEL_WORLD_GENERATION_REPAIR_ROUNDS`, default 2). Every model call is recorded before it is sent and its reply after (`…/audit` derives them again). The result is `world.created@1` with provenance `generated`, once per job. The `Location` header names the job.',
    tag: 'worlds',
    auth: true,
    idempotent: true,
    body: GenerateWorldBody,
    responses: {
      202: {
        ...json(AcceptedWorldGeneration, 'Accepted: the world is made in the background (or, for a repeated `Idempotency-Key`, the first job).'),
        headers: { Location: { description: '`/v1/worlds/generate/{jobId}`: the job’s progress.', schema: z.string() }, ...idempotentHeaders },
      },
    },
    errors: {
      ...budgetErrors,
      ...tenantErrors([]),
      ...bodyErrors(['UNKNOWN_SLOT', 'UNKNOWN_PLUGIN', 'INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: { description: 'Concurrent requests with the same `Idempotency-Key` kept colliding: `IDEMPOTENCY_KEY_TAKEN` (rare; retry).' },
    },
  },
  {
    method: 'get',
    path: '/v1/worlds/generate/{jobId}',
    operationId: 'getWorldGeneration',
    summary: 'A world generation job’s progress (long-poll with waitMs)',
    description: `\`queued\`, \`drafting\`, \`repairing\` (\`progress\`: \`repairing 1/2\`), \`done\` (with \`worldId\`) or \`failed\` (with \`error\`). With \`waitMs\` (0..${MAX_GENERATION_WAIT_MS}) a long-poll: answered as soon as the job is done or failed, else after waitMs with its progress.`,
    tag: 'worlds',
    auth: true,
    pathParams: [jobIdParam],
    query: WorldGenerationQuery,
    responses: { 200: json(WorldGenerationProgress, 'The job’s progress.') },
    errors: {
      400: { description: 'A bad query parameter: `INVALID_INPUT` (`issues` names `waitMs`).' },
      ...tenantErrors(['WORLD_GENERATION_NOT_FOUND']),
    },
  },
  {
    method: 'get',
    path: '/v1/worlds/generate/{jobId}/events',
    operationId: 'streamWorldGeneration',
    summary: 'A world generation job’s progress as Server-Sent Events',
    description:
      'A `text/event-stream`: a `progress` event (the same body as `GET /v1/worlds/generate/{jobId}`) at once and each time the job moves on; the stream ends after `done` or `failed`. Comment lines are heartbeats.',
    tag: 'worlds',
    auth: true,
    pathParams: [jobIdParam],
    responses: { 200: { description: 'The event stream (ends when the job has ended).', body: { raw: { mediaType: 'text/event-stream' } } } },
    errors: tenantErrors(['WORLD_GENERATION_NOT_FOUND']),
  },
  {
    method: 'get',
    path: '/v1/worlds/generate/{jobId}/audit',
    operationId: 'auditWorldGeneration',
    summary: 'Derive a world generation job’s model calls again from the log and compare them with what was sent',
    description:
      'Each call’s plan is derived from the job’s request and the replies recorded before it, its wire body built by the slot’s adapter (nothing is sent), and compared byte for byte with the body recorded in `world-generation.call-requested@1`.',
    tag: 'worlds',
    auth: true,
    pathParams: [jobIdParam],
    responses: { 200: json(WorldGenerationAuditSchema, 'The verdict, call by call.') },
    errors: tenantErrors(['WORLD_GENERATION_NOT_FOUND']),
  },
];

/** The routes of a tenant's worlds (issue 29). */
const WORLD_ROUTES: readonly ApiRoute[] = [
  {
    method: 'post',
    path: '/v1/worlds',
    operationId: 'createWorld',
    summary: 'Create a world',
    description:
      'The body is a `WorldDocument` (the same schema a WORLD.md folder holds); recorded as `world.created@1`, revision 1. Errors name each field path.',
    tag: 'worlds',
    auth: true,
    idempotent: true,
    body: WorldDocument,
    responses: { 201: { ...json(WorldAnswer, 'The new world (or, for a repeated `Idempotency-Key`, the first one).'), headers: worldHeaders } },
    errors: worldWriteErrors([]),
  },
  {
    method: 'post',
    path: '/v1/worlds/import',
    operationId: 'importWorld',
    summary: 'Create a world from a file: a character card (V2/V3, PNG or JSON) or a WORLD.md folder as a zip',
    description:
      'The raw body (any content type: the content is sniffed) or a multipart form with the file as `file`. See docs/worlds.md for what each card field becomes. A bad file is a 400 naming what is wrong (not a PNG, no card chunk, bad base64, bad JSON, a schema error with its path) or a 413, and creates nothing.',
    tag: 'worlds',
    auth: true,
    idempotent: true,
    responses: { 201: { ...json(WorldAnswer, 'The new world (or, for a repeated `Idempotency-Key`, the first one).'), headers: worldHeaders } },
    errors: {
      ...tenantErrors([]),
      400: {
        description:
          'The file is not a world: `EMPTY_BODY`, `MALFORMED_BODY` (a body that does not decode as its content-encoding), `BAD_MULTIPART` (a form that is not one file in the field `file`), `NOT_A_CARD_FILE`, `BAD_PNG`, `NO_CARD_CHUNK`, `BAD_BASE64`, `BAD_TEXT_ENCODING`, `BAD_JSON`, `TOO_DEEP`, `BAD_STRING`, `UNSUPPORTED_SPEC`, `INVALID_CARD`, `LIMIT_EXCEEDED`, `BAD_ARCHIVE`, `INVALID_WORLD`; `issues` names the place.',
      },
      413: {
        description:
          'Larger than a world file may be: `BODY_TOO_LARGE` (past 16 MiB, decoded: answered as soon as the limit is passed, the rest of the upload unread and the connection closed), `TOO_LARGE`, `ARCHIVE_TOO_LARGE`, `WORLD_TOO_LARGE`.',
      },
      415: { description: 'A content-encoding the API does not read: `UNSUPPORTED_ENCODING` (gzip, deflate, br or none).' },
      ...idempotencyErrors,
      409: { description: 'Concurrent requests with the same `Idempotency-Key` kept colliding: `IDEMPOTENCY_KEY_TAKEN` (rare; retry).' },
    },
  },
  {
    method: 'get',
    path: '/v1/worlds/{id}/export',
    operationId: 'exportWorld',
    summary: 'A world as a file: its WORLD.md folder as a zip, or a character card',
    description: 'Import the file again (`POST /v1/worlds/import`) to get the same document (a card keeps the fields a card has).',
    tag: 'worlds',
    auth: true,
    pathParams: [worldIdParam],
    query: WorldExportQuery,
    responses: {
      200: { description: 'The file (`application/zip`, `application/json` or `image/png`).', body: { raw: { mediaType: 'application/octet-stream' } } },
    },
    errors: { ...tenantErrors(['WORLD_NOT_FOUND']), 400: { description: 'A bad query: `INVALID_INPUT`.' } },
  },
  {
    method: 'get',
    path: '/v1/worlds',
    operationId: 'listWorlds',
    summary: 'The worlds a session can start on',
    description: 'The deployment’s built-in worlds (`builtIn: true`, read-only) first, then the tenant’s own in creation order; `nextCursor` pages on.',
    tag: 'worlds',
    auth: true,
    query: WorldListQuery,
    responses: { 200: json(WorldPage, 'A page of worlds.') },
    errors: { ...tenantErrors([]), 400: { description: 'A bad query: `INVALID_INPUT`, `INVALID_CURSOR`.' } },
  },
  {
    method: 'get',
    path: '/v1/worlds/{id}',
    operationId: 'getWorld',
    summary: 'A world, now or at an earlier revision',
    tag: 'worlds',
    auth: true,
    pathParams: [worldIdParam],
    query: WorldQuery,
    responses: { 200: { ...json(WorldAnswer, 'The world at that revision.'), headers: worldHeaders } },
    errors: { ...tenantErrors(['WORLD_NOT_FOUND']), 400: { description: 'A bad query: `INVALID_INPUT`.' } },
  },
  {
    method: 'put',
    path: '/v1/worlds/{id}',
    operationId: 'replaceWorld',
    summary: 'Replace a world’s document (a new revision)',
    description:
      'Needs `If-Match: "<revision>"` (the `ETag` you read): 412 `WORLD_REVISION_MISMATCH` when the world moved on since, 428 `WORLD_REVISION_REQUIRED` without it. Sessions already running keep the revision they started on (their audit stays identical); new sessions start on the new one.',
    tag: 'worlds',
    auth: true,
    pathParams: [worldIdParam],
    idempotent: true,
    ifMatch: 'required',
    body: WorldDocument,
    responses: { 200: { ...json(WorldAnswer, 'The world at its new revision.'), headers: worldHeaders } },
    errors: worldRevisionErrors,
  },
  {
    method: 'patch',
    path: '/v1/worlds/{id}',
    operationId: 'patchWorld',
    summary: 'Change part of a world’s document (JSON Merge Patch, a new revision)',
    description:
      'The body is a JSON Merge Patch (RFC 7396) of the `WorldDocument`: an object merges key by key, `null` removes a key, anything else replaces. The result is validated whole. `If-Match` as for PUT.',
    tag: 'worlds',
    auth: true,
    pathParams: [worldIdParam],
    idempotent: true,
    ifMatch: 'required',
    body: JsonValue,
    responses: { 200: { ...json(WorldAnswer, 'The world at its new revision.'), headers: worldHeaders } },
    errors: worldRevisionErrors,
  },
  {
    method: 'delete',
    path: '/v1/worlds/{id}',
    operationId: 'archiveWorld',
    summary: 'Archive a world',
    description: 'Recorded as `world.archived@1`: no new session starts on it; sessions running on it keep working. Archiving twice changes nothing.',
    tag: 'worlds',
    auth: true,
    pathParams: [worldIdParam],
    idempotent: true,
    responses: { 200: { ...json(WorldAnswer, 'The archived world.'), headers: worldHeaders } },
    errors: { ...tenantErrors(['WORLD_NOT_FOUND']), ...idempotencyErrors, 409: { description: 'A built-in world: `WORLD_READ_ONLY`.' } },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/world-revision',
    operationId: 'moveSessionWorldRevision',
    summary: 'Move a session to a newer revision of its world',
    description:
      'Recorded as `session.world-revised@1`: the turns accepted after it read the new revision; earlier turns (and their audit) keep theirs. Default: the world’s current revision.',
    tag: 'worlds',
    auth: true,
    pathParams: [sessionIdParam],
    idempotent: true,
    body: WorldRevisionBody,
    responses: { 200: { ...json(SessionWorldRevision, 'The revision the session now runs.'), headers: idempotentHeaders } },
    errors: {
      ...tenantErrors(['SESSION_NOT_FOUND']),
      ...bodyErrors(['UNKNOWN_WORLD_REVISION', 'INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: {
        description: 'Nothing to move to: `SESSION_HAS_NO_WORLD`, `WORLD_READ_ONLY` (a built-in world), `WORLD_REVISION_NOT_NEWER`, `STREAM_VERSION_CONFLICT`.',
      },
    },
  },
];

const keyIdParam: PathParam = { name: 'id', description: 'The key id (a UUID).', schema: uuid };
const tenantIdParam: PathParam = { name: 'id', description: 'The tenant id (a UUID).', schema: uuid };
const keyConflict: ErrorResponses = {
  409: { description: 'Another admin action on the tenant kept winning (rare; retry): `STREAM_VERSION_CONFLICT`.' },
};
const SCOPES_NOTE =
  'Scopes: `play` (sessions and worlds: create, inputs, cancel, edit, revert, branch…), `read` (every GET: reads, the inspector’s data, event streams, usage), `admin` (the tenant’s settings and keys).';

/** The tenant's API keys (issue 32): a key with the `admin` scope. */
const KEY_ROUTES: readonly ApiRoute[] = [
  {
    method: 'post',
    path: '/v1/keys',
    operationId: 'createKey',
    summary: 'Make an API key (answered once)',
    description: `The key (\`cvl_…\`, 256 random bits) is in this answer only: the engine keeps an HMAC of it. Recorded as \`api-key.created@1\` in the stream \`tenant:<tenantId>\` (id, name, scopes, \`by\`: the key that made it). ${SCOPES_NOTE}`,
    tag: 'keys',
    auth: true,
    body: CreateKeyBody,
    responses: { 201: json(CreatedApiKey, 'The new key, with the key itself (shown once).') },
    errors: { ...tenantErrors([]), ...bodyErrors([]), ...keyConflict },
  },
  {
    method: 'get',
    path: '/v1/keys',
    operationId: 'listKeys',
    summary: 'The tenant’s API keys (never a key or its hash)',
    tag: 'keys',
    auth: true,
    responses: { 200: json(ApiKeyList, 'The keys, revoked ones too.') },
    errors: tenantErrors([]),
  },
  {
    method: 'delete',
    path: '/v1/keys/{id}',
    operationId: 'revokeKey',
    summary: 'Revoke an API key (every API process refuses it within a second)',
    description:
      'Recorded as `api-key.revoked@1`; revoking a revoked key changes nothing. A tenant’s key cannot revoke the tenant’s last admin key (409 `LAST_ADMIN_KEY`; the operator can). Another tenant’s key id is a 404.',
    tag: 'keys',
    auth: true,
    pathParams: [keyIdParam],
    responses: { 200: json(ApiKeySchema, 'The revoked key.') },
    errors: { ...tenantErrors(['API_KEY_NOT_FOUND']), 409: { description: '`LAST_ADMIN_KEY`, or `STREAM_VERSION_CONFLICT` (retry).' } },
  },
];

/** The operator's tenants (issue 32), behind `COVEL_ADMIN_API_KEY`. */
const ADMIN_ROUTES: readonly ApiRoute[] = [
  {
    method: 'post',
    path: '/admin/tenants',
    operationId: 'createTenant',
    summary: 'Make a tenant and its first key (every scope, answered once)',
    description: 'Recorded as `tenant.created@1` and `api-key.created@1` (`by: operator`) in the stream `tenant:<tenantId>`.',
    tag: 'admin',
    auth: 'operator',
    body: CreateTenantBody,
    responses: { 201: json(CreatedTenant, 'The tenant and its first key.') },
    errors: { ...operatorErrors([]), ...bodyErrors([]), ...keyConflict },
  },
  {
    method: 'get',
    path: '/admin/tenants',
    operationId: 'listTenants',
    summary: 'Every tenant',
    tag: 'admin',
    auth: 'operator',
    responses: { 200: json(TenantList, 'The tenants, oldest first.') },
    errors: operatorErrors([]),
  },
  {
    method: 'post',
    path: '/admin/tenants/{id}/keys',
    operationId: 'createTenantKey',
    summary: 'Make a key of a tenant (answered once)',
    description: `As \`POST /v1/keys\`, \`by: operator\`. ${SCOPES_NOTE}`,
    tag: 'admin',
    auth: 'operator',
    pathParams: [tenantIdParam],
    body: CreateKeyBody,
    responses: { 201: json(CreatedApiKey, 'The new key, with the key itself (shown once).') },
    errors: { ...operatorErrors(['TENANT_NOT_FOUND']), ...bodyErrors([]), ...keyConflict },
  },
  {
    method: 'get',
    path: '/admin/tenants/{id}/keys',
    operationId: 'listTenantKeys',
    summary: 'A tenant’s keys',
    tag: 'admin',
    auth: 'operator',
    pathParams: [tenantIdParam],
    responses: { 200: json(ApiKeyList, 'The keys, revoked ones too.') },
    errors: operatorErrors(['TENANT_NOT_FOUND']),
  },
  {
    method: 'delete',
    path: '/admin/tenants/{id}/keys/{keyId}',
    operationId: 'revokeTenantKey',
    summary: 'Revoke a key of a tenant (its last admin key too)',
    tag: 'admin',
    auth: 'operator',
    pathParams: [tenantIdParam, { name: 'keyId', description: 'The key id (a UUID).', schema: uuid }],
    responses: { 200: json(ApiKeySchema, 'The revoked key.') },
    errors: { ...operatorErrors(['API_KEY_NOT_FOUND']), ...keyConflict },
  },
];

/** A tenant's own limits (issue 32). */
const LIMITS_ROUTES: readonly ApiRoute[] = [
  {
    method: 'get',
    path: '/v1/limits',
    operationId: 'getLimits',
    summary: 'The tenant’s limits: request rate, executions in flight, spend budget',
    description:
      '`limits`: what the operator set (`PUT /admin/tenants/{id}/limits` with the admin key; absent fields are the deployment’s defaults); `effective`: what is in force (`requestsPerSecond` 0: no rate limit; `maxInFlight` null: the queue’s default; `budget` null: none).',
    tag: 'limits',
    auth: true,
    responses: { 200: json(TenantLimitsAnswer, 'The tenant’s limits.') },
    errors: tenantErrors([]),
  },
];

/** The operator's view and change of a tenant's limits (issue 32), behind `COVEL_ADMIN_API_KEY`. */
const ADMIN_LIMITS_ROUTES: readonly ApiRoute[] = [
  {
    method: 'get',
    path: '/admin/tenants/{id}/limits',
    operationId: 'getTenantLimits',
    summary: 'A tenant’s limits: what is set and what is in force',
    tag: 'admin',
    auth: 'operator',
    pathParams: [tenantIdParam],
    responses: { 200: json(TenantLimitsAnswer, 'The tenant’s limits.') },
    errors: operatorErrors(['TENANT_NOT_FOUND']),
  },
  {
    method: 'put',
    path: '/admin/tenants/{id}/limits',
    operationId: 'setTenantLimits',
    summary: 'Replace a tenant’s limits (in force on every API process within a second)',
    description:
      'The whole object: an absent field is the deployment’s default again. Recorded as `tenant.limits-changed@1` (`by: operator`) in the stream `tenant:<tenantId>`. A bad field is a 400 `INVALID_LIMITS` naming it.',
    tag: 'admin',
    auth: 'operator',
    pathParams: [tenantIdParam],
    body: TenantLimitsBody,
    responses: { 200: json(TenantLimitsAnswer, 'The tenant’s limits as now recorded.') },
    errors: { ...operatorErrors(['TENANT_NOT_FOUND']), ...bodyErrors(['INVALID_LIMITS']), ...keyConflict },
  },
];

/** Every route of the API: the one list the document is built from. */
export const API_ROUTES: readonly ApiRoute[] = [
  ...KEY_ROUTES,
  ...ADMIN_LIMITS_ROUTES,
  ...ADMIN_ROUTES,
  ...LIMITS_ROUTES,
  ...WORLD_GENERATION_ROUTES,
  ...WORLD_ROUTES,
  {
    method: 'post',
    path: '/v1/sessions',
    operationId: 'createSession',
    summary: 'Create a session',
    tag: 'sessions',
    auth: true,
    idempotent: true,
    body: CreateSessionBody,
    responses: { 201: { ...json(CreatedSession, 'The new session (or, for a repeated `Idempotency-Key`, the first one).'), headers: idempotentHeaders } },
    errors: {
      ...tenantErrors(['WORLD_NOT_FOUND']),
      ...bodyErrors(['INVALID_OPENING', 'INVALID_PLUGIN_SETTINGS', 'UNKNOWN_SLOT', 'INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: { description: 'The world is archived: `WORLD_ARCHIVED`; or the session changed under the request too many times: `STREAM_VERSION_CONFLICT`.' },
    },
  },
  {
    method: 'patch',
    path: '/v1/sessions/{id}/preferences',
    operationId: 'changePreferences',
    summary: 'Change the player’s preferences per model slot',
    description:
      'Per slot of `llm.toml`: explicit `reasoning` and a `toolChoice` over the slot’s own and its preset’s, both over a runtime’s `agent.reasoning` / `agent.toolChoice` (spec §3). A field set to a value changes it, `null` clears it, an absent one stays; a slot set to `null` clears it all. Recorded as `session.preferences-changed@1`: the turns accepted after it use the new preferences (a turn already accepted keeps those it was accepted with). A change that changes nothing records nothing.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    body: PreferencesPatchBody,
    responses: { 200: json(SessionPreferencesAnswer, 'The preferences as they now are.') },
    errors: {
      ...tenantErrors(['SESSION_NOT_FOUND']),
      ...bodyErrors(['UNKNOWN_SLOT']),
      ...appendConflict,
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/inputs',
    operationId: 'submitInput',
    summary: 'Submit a player input',
    description:
      'Starts a turn. The inputs of a session run one at a time, in the order they were accepted. With `midTurn: true` the text joins the running turn instead (its runtimes read it at their next model call; it is committed with the turn).',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    idempotent: true,
    body: SubmitInputBody,
    responses: { 202: { ...json(AcceptedInput, 'Accepted: the turn runs in the background.'), headers: idempotentHeaders } },
    errors: {
      ...budgetErrors,
      ...tenantErrors(['SESSION_NOT_FOUND']),
      ...bodyErrors(['INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: {
        description:
          'A mid-turn message while no turn of the session is running: `NO_RUNNING_TURN` (nothing recorded; send it without `midTurn`); or the session changed under the request too many times in a row: `STREAM_VERSION_CONFLICT` (retry).',
      },
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/activations',
    operationId: 'activateRuntime',
    summary: 'Run a manual runtime',
    description: 'Runs a `schedule.trigger: manual` runtime as its own execution, its payload in `<runtime-activation>`.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    idempotent: true,
    body: ActivationBody,
    responses: { 202: { ...json(StartedExecution, 'Accepted: the runtime runs in the background.'), headers: idempotentHeaders } },
    errors: {
      ...budgetErrors,
      ...tenantErrors(['SESSION_NOT_FOUND']),
      ...bodyErrors(['UNKNOWN_RUNTIME', 'RUNTIME_NOT_MANUAL', 'INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      ...appendConflict,
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/messages',
    operationId: 'listMessages',
    summary: 'The committed messages of a session',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    responses: { 200: json(z.array(Message), 'The messages, in order.') },
    errors: tenantErrors(['SESSION_NOT_FOUND']),
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/events',
    operationId: 'streamSessionEvents',
    summary: 'The session as Server-Sent Events: status, streamed story text, tools, commits, failures',
    description: [
      'A `text/event-stream` that follows the session’s log (any API process serves it). Events: `branched` (a branch’s first event: `{ parentSessionId, atTurnId }`; the parent’s history it starts with is in `GET …/messages`), `opening` (the session’s opening scene, turn 0: `{ turnId, messageId, openingIndex, role, outputKind, text }`), `status` (queued, running), `call` and `call-ended` (model calls),',
      '`delta` (story text as the model writes it: `{ callId, seq, text }`), `tool` (called, completed), `output`, `committed` (the turn’s messages), `failed`,',
      '`cancelled` (stopped: `{ executionId, turnId, status, keepPartial, by, messages? }`, `messages` the turn as kept with `keepPartial`), `reverted` (undo: `{ turnId, turnIds, executionIds, by }`, the turns that left the history) and `edited` (`{ messageId, turnId, text, by }`, a message’s new text).',
      'A log event’s `id` is its global position; a delta’s is `<position of its call>-<seq>`. Comment lines are heartbeats.',
      'Resume with the `Last-Event-ID` header (or `lastEventId`): every log event after it exactly once, and the deltas of a call that still streams after the last one received;',
      'a call that has ended sends no deltas on a resumed stream (its text is in `call-ended`/`committed`).',
    ].join(' '),
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    query: z.object({ lastEventId: z.string().optional() }),
    responses: { 200: { description: 'The event stream (stays open; ends when the server shuts down).', body: { raw: { mediaType: 'text/event-stream' } } } },
    errors: tenantErrors(['SESSION_NOT_FOUND']),
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/media/{mediaId}',
    operationId: 'getMedia',
    summary: 'The bytes of a generated asset',
    description: 'The `media` of a message, with its Content-Type. Media never change: cacheable, privately.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam, { name: 'mediaId', description: 'The media id (a UUID, from a message’s `media.mediaId`).', schema: uuid }],
    responses: { 200: { description: 'The asset’s bytes, with the Content-Type it was generated with.', body: { raw: { mediaType: '*/*' } } } },
    errors: {
      400: { description: 'The media id is not a UUID: `INVALID_MEDIA_ID` (`issues` names `mediaId`).' },
      ...tenantErrors(['SESSION_NOT_FOUND', 'MEDIA_NOT_FOUND']),
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/llm-calls',
    operationId: 'listLlmCalls',
    summary: 'Every model call of a session, as sent',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    responses: { 200: json(z.array(LlmCall), 'The calls, in order (the view may lag the log by up to 2 s).') },
    errors: { ...tenantErrors(['SESSION_NOT_FOUND']), ...quarantinedViewErrors('trace_events') },
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/prefix-report',
    operationId: 'getPrefixReport',
    summary: 'How much of each request repeats the previous one',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    responses: { 200: json(z.array(PrefixReportRow), 'One row per model call, in order (the view may lag the log by up to 2 s).') },
    errors: { ...tenantErrors(['SESSION_NOT_FOUND']), ...quarantinedViewErrors('prefix_reports') },
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/turns/{turnId}/audit',
    operationId: 'auditTurn',
    summary: 'Re-derive a turn’s requests from the events and compare them with what was sent',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam, { name: 'turnId', description: 'The turn id (a UUID).', schema: uuid }],
    responses: { 200: json(TurnAuditSchema, 'The verdict, call by call.') },
    errors: {
      ...tenantErrors(['SESSION_NOT_FOUND', 'TURN_NOT_FOUND']),
      409: { description: 'A call’s runtime is no longer in the plugin catalog, so its request cannot be rebuilt: `RUNTIME_NOT_IN_CATALOG`.' },
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/turns/{turnId}/retry',
    operationId: 'retryTurn',
    summary: 'Regenerate the latest turn (reroll)',
    description:
      'Re-runs the latest turn from its source: a new execution with the same player input, reading the history without that turn. When it commits, its result takes the turn’s place in the history (the log keeps every alternative; `turn.superseded@1`). `turnId` may name any alternative of the latest turn.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam, turnIdParam],
    idempotent: true,
    responses: { 202: { ...json(StartedExecution, 'Accepted: the regeneration runs in the background.'), headers: idempotentHeaders } },
    errors: {
      ...budgetErrors,
      ...tenantErrors(['SESSION_NOT_FOUND', 'TURN_NOT_FOUND']),
      ...bodyErrors(['INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: {
        description:
          'Not the latest turn (`NOT_LATEST_TURN`, naming the latest), a turn of the session still running (`TURN_RUNNING`), the latest turn already compacted (`TURN_COMPACTED`), or `STREAM_VERSION_CONFLICT` (retry).',
      },
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/turns/{turnId}/alternatives',
    operationId: 'listTurnAlternatives',
    summary: 'The alternatives of a turn',
    description: 'The turn first played and each regeneration of it, oldest first; `selected` marks the one in the history. `turnId` may name any of them.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam, turnIdParam],
    responses: { 200: json(TurnAlternatives, 'The alternatives, oldest first.') },
    errors: tenantErrors(['SESSION_NOT_FOUND', 'TURN_NOT_FOUND']),
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/turns/{turnId}/select',
    operationId: 'selectTurnAlternative',
    summary: 'Select an alternative of the latest turn',
    description:
      'Puts the alternative in the history in place of the selected one (`turn.superseded@1`, cause `select`). Selecting the selected one changes nothing. Only the latest turn’s alternatives may be selected.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam, turnIdParam],
    idempotent: true,
    body: SelectAlternativeBody,
    responses: { 200: { ...json(SelectedAlternative, 'The alternative in the history now.'), headers: idempotentHeaders } },
    errors: {
      ...tenantErrors(['SESSION_NOT_FOUND', 'TURN_NOT_FOUND', 'ALTERNATIVE_NOT_FOUND']),
      ...bodyErrors(['INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: {
        description:
          'Not the latest turn (`NOT_LATEST_TURN`), a turn still running (`TURN_RUNNING`), an alternative that has not committed (`ALTERNATIVE_NOT_COMMITTED`), the latest turn compacted (`TURN_COMPACTED`), or `STREAM_VERSION_CONFLICT` (retry).',
      },
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/branch',
    operationId: 'branchSession',
    summary: 'Branch a session at a turn of its history',
    description:
      'A new session whose log starts with `session.branched@1 { parentSessionId, atTurnId, parentVersion, rootSessionId, by }` and, in the same append, the parent’s settings as they stand (world at the revision in effect, locale, plugins, plugin settings) and its preferences. Its history, plugin data and summaries are the parent’s log up to `parentVersion` without the turns after `atTurnId`, folded into the branch’s own read models; the parent is not changed. Its requests send the root session’s `prompt_cache_key`, so the provider’s cache of the shared prefix is reused.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    idempotent: true,
    body: BranchSessionBody,
    responses: { 201: { ...json(BranchedSession, 'The branch (or, for a repeated `Idempotency-Key`, the first one).'), headers: idempotentHeaders } },
    errors: {
      ...tenantErrors(['SESSION_NOT_FOUND', 'TURN_NOT_FOUND']),
      ...bodyErrors(['INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: {
        description:
          'A turn of the session still queued or running (`TURN_RUNNING`: branch once it has ended), or the session kept changing under the request (`STREAM_VERSION_CONFLICT`, retry), or concurrent requests with the same `Idempotency-Key` kept colliding (`IDEMPOTENCY_KEY_TAKEN`, retry).',
      },
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/turns/{turnId}/alternatives/{n}/select',
    operationId: 'selectTurnAlternativeByNumber',
    summary: 'Select an alternative of the latest turn by its number',
    description:
      'As `POST …/turns/{turnId}/select`, the alternative named by its number: 1 is the turn as first played, then each regeneration, in the order `GET …/alternatives` lists them. No body (or `{}`).',
    tag: 'sessions',
    auth: true,
    pathParams: [
      sessionIdParam,
      turnIdParam,
      { name: 'n', description: 'The alternative’s number, from 1 (a number the turn does not have is a 404).', schema: z.string().regex(/^[1-9][0-9]{0,5}$/) },
    ],
    idempotent: true,
    body: EmptyBody,
    responses: { 200: { ...json(SelectedAlternative, 'The alternative in the history now.'), headers: idempotentHeaders } },
    errors: {
      ...tenantErrors(['SESSION_NOT_FOUND', 'TURN_NOT_FOUND', 'ALTERNATIVE_NOT_FOUND']),
      ...bodyErrors(['INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: {
        description:
          'Not the latest turn (`NOT_LATEST_TURN`), a turn still running (`TURN_RUNNING`), an alternative that has not committed (`ALTERNATIVE_NOT_COMMITTED`), the latest turn compacted (`TURN_COMPACTED`), or `STREAM_VERSION_CONFLICT` (retry).',
      },
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/{id}/turns/{turnId}/revert',
    operationId: 'revertTurn',
    summary: 'Undo: revert a turn and every later one',
    description:
      'Records `turn.reverted@1` naming the turn, every later turn of the history (oldest first) and every execution of them (each alternative, failed runs, activations recorded since the turn’s first input). The history, plugin data, dimensions, memory and summaries return to their state before the turn; the log keeps everything (the audit of past requests still reads it as it stood). A compacted turn may be reverted. No body (or `{}`).',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam, turnIdParam],
    idempotent: true,
    body: EmptyBody,
    responses: {
      200: { ...json(RevertedTurns, 'What left the history (or, for a repeated `Idempotency-Key`, the first revert).'), headers: idempotentHeaders },
    },
    errors: {
      ...tenantErrors(['SESSION_NOT_FOUND', 'TURN_NOT_FOUND']),
      ...bodyErrors(['INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: {
        description:
          'The opening (turn 0: `OPENING_NOT_REVERTIBLE`), an execution of the session queued or running (`TURN_RUNNING`), or `STREAM_VERSION_CONFLICT` (retry). A turn not in the history (unknown, an alternative not selected, already reverted) is a 404 `TURN_NOT_FOUND`.',
      },
    },
  },
  {
    method: 'patch',
    path: '/v1/sessions/{id}/messages/{messageId}',
    operationId: 'editMessage',
    summary: 'Edit a committed player input or story text',
    description:
      'Records `message.edited@1`: later requests read the new text (the audit of earlier ones still derives what was sent). Bookkeepers are not run again: plugin data, dimensions, memory and affinity stay as the original text left them. Text the message already has records nothing. With `regenerate: true` (the latest turn’s player input only) the turn is re-run with the edited input, as `POST …/retry` does, in the same append.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam, { name: 'messageId', description: 'The message id (a UUID, as `GET …/messages` lists it).', schema: uuid }],
    idempotent: true,
    body: EditMessageBody,
    responses: { 200: { ...json(EditedMessage, 'The message as it now reads (+ `execution` when regenerating).'), headers: idempotentHeaders } },
    errors: {
      ...budgetErrors,
      ...tenantErrors(['SESSION_NOT_FOUND', 'MESSAGE_NOT_FOUND']),
      ...bodyErrors(['INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: {
        description:
          'Neither a player input nor story text (`MESSAGE_NOT_EDITABLE`), compacted into a summary (`MESSAGE_COMPACTED`), an execution of the session queued or running (`TURN_RUNNING`), `regenerate` on a turn that is not the latest (`NOT_LATEST_TURN`), or `STREAM_VERSION_CONFLICT` (retry).',
      },
    },
  },
  {
    method: 'get',
    path: '/v1/sessions',
    operationId: 'listSessions',
    summary: 'The tenant’s sessions, newest first',
    tag: 'sessions',
    auth: true,
    query: SessionListQuery,
    responses: { 200: json(z.array(SessionSummary), 'The sessions.') },
    errors: { 400: { description: 'A bad query parameter: `INVALID_INPUT` (`issues` names `limit`).' }, ...tenantErrors([]) },
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}',
    operationId: 'getSession',
    summary: 'A session, with its use of the history limit',
    description:
      'As the list gives it (`branchedFrom` for a branch), with `branches`: the session’s branches, newest first (at most 100). `history` counts the uncompacted messages its next turn reads against the engine’s limit: `warning` from 80 %, `full` past it — every turn then fails with `history.code` (`HISTORY_NEEDS_COMPACTION`: add `history-compaction` to the session’s plugins).',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    responses: { 200: json(SessionDetail, 'The session.') },
    errors: tenantErrors(['SESSION_NOT_FOUND']),
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/turns',
    operationId: 'listTurns',
    summary: 'The turns of a session, with request sizes and cache reads',
    description: 'Read from the session’s events: never behind the log.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam],
    responses: { 200: json(z.array(SessionTurn), 'The turns, in order.') },
    errors: tenantErrors(['SESSION_NOT_FOUND']),
  },
  {
    method: 'get',
    path: '/v1/sessions/{id}/turns/{turnId}/calls',
    operationId: 'listTurnCalls',
    summary: 'Every model call of a turn as the model saw it',
    description:
      'Each request split into its recorded sections and messages, with the cache boundaries the adapter set, usage, tool activity, and the prefix shared with the previous turn’s request.',
    tag: 'sessions',
    auth: true,
    pathParams: [sessionIdParam, { name: 'turnId', description: 'The turn id (a UUID).', schema: uuid }],
    responses: { 200: json(z.array(CallInspection), 'The calls, in log order.') },
    errors: tenantErrors(['SESSION_NOT_FOUND', 'TURN_NOT_FOUND']),
  },
  {
    method: 'get',
    path: '/v1/usage',
    operationId: 'getUsage',
    summary: 'The tenant’s model calls, tokens and est. cost over a range of days',
    description: `Every answered model call of the tenant — its runtimes’ calls, compaction summaries, world generation — from the \`usage\` view of the log (an async view: it may lag the log by a moment), summed per UTC day and grouped by \`groupBy\`. A call counts once, whatever became of its turn (failed, cancelled, regenerated: it was paid for). \`from\` and \`to\` select UTC days (a timestamp stands for its day), both included, at most ${MAX_USAGE_RANGE_DAYS} days. \`estCostUsd\` prices each model’s tokens at the list prices in force now: an estimate, not a bill.`,
    tag: 'usage',
    auth: true,
    query: UsageQuery,
    responses: { 200: json(UsageReportSchema, 'The rows, ordered by key, and the totals.') },
    errors: {
      400: {
        description:
          'A bad query parameter: `INVALID_INPUT` (`issues` names `from`, `to` or `groupBy`: a bad date, `to` before `from` or too far after it, an unknown group or parameter).',
      },
      ...tenantErrors([]),
    },
  },
  {
    method: 'get',
    path: '/v1/executions/{id}',
    operationId: 'getExecution',
    summary: 'The state of an execution (long-poll with waitMs)',
    description: `With \`waitMs\` (0..${MAX_EXECUTION_WAIT_MS}) a long-poll: answered as soon as the execution has ended (committed, failed or cancelled), else after waitMs with its current state.`,
    tag: 'executions',
    auth: true,
    pathParams: [{ name: 'id', description: 'The execution id (a UUID).', schema: uuid }],
    query: ExecutionQuery,
    responses: { 200: json(Execution, 'The execution.') },
    errors: {
      400: { description: 'A bad query parameter: `INVALID_INPUT` (`issues` names `waitMs`).' },
      ...tenantErrors(['EXECUTION_NOT_FOUND']),
    },
  },
  {
    method: 'post',
    path: '/v1/executions/{id}/resume',
    operationId: 'resumeExecution',
    summary: 'Resume an execution a runtime suspended',
    description:
      'Answers what a waiting execution (`status: waiting`) waits for: the payload becomes the suspended tool call’s result, and the runtime goes on, on any worker, with the same input slots and the same protected current turn as before the pause.',
    tag: 'executions',
    auth: true,
    pathParams: [{ name: 'id', description: 'The execution id (a UUID).', schema: uuid }],
    idempotent: true,
    body: ResumeBody,
    responses: { 202: { ...json(ResumedExecution, 'Accepted: the execution goes on in the background.'), headers: idempotentHeaders } },
    errors: {
      ...tenantErrors(['EXECUTION_NOT_FOUND']),
      ...bodyErrors(['INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: { description: 'The execution is not waiting (never suspended, already resumed, or ended): `EXECUTION_NOT_WAITING`.' },
    },
  },
  {
    method: 'post',
    path: '/v1/executions/{id}/cancel',
    operationId: 'cancelExecution',
    summary: 'Stop an execution (queued, running or waiting)',
    description: [
      'The execution ends without its commit: its model call is aborted mid-stream, `execution.cancelled@1` is recorded, and the session takes its next input at once.',
      'The story text streamed so far is dropped and no turn is committed, unless `keepPartial: true`: then it is kept as the turn’s story text (the player’s input and that text, committed as a turn is; nothing is kept when no story text was written yet).',
      'A cancel that races the commit ends as exactly one of the two: the one recorded first wins, the cancel then answers 409 `EXECUTION_ENDED`.',
      'Cancelling a cancelled execution (under the same key, or none) answers its first cancel.',
    ].join(' '),
    tag: 'executions',
    auth: true,
    pathParams: [{ name: 'id', description: 'The execution id (a UUID).', schema: uuid }],
    idempotent: true,
    body: CancelBody,
    responses: { 200: { ...json(CancelledExecution, 'Stopped (or stopped already: the first cancel’s answer).'), headers: idempotentHeaders } },
    errors: {
      ...tenantErrors(['EXECUTION_NOT_FOUND']),
      ...bodyErrors(['INVALID_IDEMPOTENCY_KEY']),
      ...idempotencyErrors,
      409: {
        description:
          'The execution had already ended (its message names how: committed or failed): `EXECUTION_ENDED`; nothing was recorded. Or the session changed under the request too many times in a row: `STREAM_VERSION_CONFLICT` (retry).',
      },
    },
  },
  {
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Each dependency probed in bounded time',
    tag: 'health',
    auth: false,
    responses: {
      200: json(HealthReportSchema, 'Everything is up.'),
      503: json(
        HealthReportSchema,
        'Degraded (an async projection is stopped or quarantined an event no operator has acknowledged, or a model slot is slow) or unavailable (the database or the queue is down).',
      ),
    },
    errors: publicErrors,
  },
  {
    method: 'get',
    path: '/health/live',
    operationId: 'getLiveness',
    summary: 'The process answers (liveness; says nothing of dependencies)',
    tag: 'health',
    auth: false,
    responses: { 200: json(Liveness, 'Alive.') },
    errors: publicErrors,
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document (OpenAPI 3.1)',
    tag: 'docs',
    auth: false,
    responses: { 200: json(z.looseObject({ openapi: z.string().meta({ description: 'The OpenAPI version: 3.1.x.' }) }), 'The OpenAPI document.') },
    errors: publicErrors,
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'getDocsPage',
    summary: 'This document, rendered (Swagger UI, served by the API: works offline)',
    tag: 'docs',
    auth: false,
    responses: { 200: { description: 'The page.', body: { raw: { mediaType: 'text/html' } } } },
    errors: publicErrors,
  },
  {
    method: 'get',
    path: '/docs/{asset}',
    operationId: 'getDocsAsset',
    summary: 'A script, style sheet or icon of the rendered page',
    tag: 'docs',
    auth: false,
    pathParams: [{ name: 'asset', description: 'A file of the page.', schema: z.enum(DOCS_ASSETS) }],
    responses: { 200: { description: 'The file.', body: { raw: { mediaType: '*/*' } } } },
    errors: { 404: { description: 'No such file of the page: `NOT_FOUND`.' }, ...publicErrors },
  },
  {
    method: 'get',
    path: '/inspector',
    operationId: 'getInspectorPage',
    summary: 'The web prompt inspector (asks for the API key, keeps it in the browser session)',
    tag: 'inspector',
    auth: false,
    responses: { 200: { description: 'The page.', body: { raw: { mediaType: 'text/html' } } } },
    errors: publicErrors,
  },
  {
    method: 'get',
    path: '/inspector/{asset}',
    operationId: 'getInspectorAsset',
    summary: 'A script or style sheet of the inspector',
    tag: 'inspector',
    auth: false,
    pathParams: [{ name: 'asset', description: 'A file of the page.', schema: z.enum(INSPECTOR_ASSETS) }],
    responses: { 200: { description: 'The file.', body: { raw: { mediaType: '*/*' } } } },
    errors: { 404: { description: 'No such file of the page: `NOT_FOUND`.' }, ...publicErrors },
  },
];

/** The header of the idempotent routes (the same schema `idempotencyKeyOf` validates with). */
export const IDEMPOTENCY_KEY = { name: IDEMPOTENCY_KEY_HEADER, schema: IdempotencyKeyHeader };
