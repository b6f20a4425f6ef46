import { execFileSync } from 'node:child_process';
import Ajv2020 from 'ajv/dist/2020';
import type { INestApplication } from '@nestjs/common';
import { createApiApp } from '../../apps/api/create-api-app';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

type Json = Record<string, unknown>;
interface Operation {
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json> };
}

/** `GET /v1/sessions/:id` (Nest, Express) ↔ `GET /v1/sessions/{id}` (OpenAPI). */
const asOpenApiPath = (expressPath: string) => expressPath.replace(/:(\w+)/g, '{$1}');

/** The routes Nest registered on the Express router, as `METHOD /path/{param}`. */
function registeredRoutes(app: INestApplication): string[] {
  const express = app.getHttpAdapter().getInstance() as { router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] } };
  return express.router.stack.flatMap((layer) =>
    layer.route ? Object.keys(layer.route.methods).map((method) => `${method.toUpperCase()} ${asOpenApiPath(layer.route!.path)}`) : [],
  );
}

const documentedRoutes = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));

/** The API's OpenAPI document (`GET /openapi.json`), read as a client would. */
describe('OpenAPI document and page', () => {
  let covel: EmbeddedEngine;
  let key: string;
  let doc: Document;
  let ajv: Ajv2020;
  beforeAll(async () => {
    covel = await startEmbedded();
    key = (await covel.engine.tenants.create('docs')).apiKey;
    const res = await fetch(`${covel.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = (await res.json()) as Document;
    // the document's schemas (JSON Schema 2020-12, OpenAPI 3.1), checked by a validator of its own (not zod,
    // which wrote them); `format` is an annotation: zod writes a `pattern` beside each format it sets (uuid, date-time)
    ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
    ajv.addSchema({ components: doc.components }, 'openapi.json');
  }, 60_000);
  afterAll(() => covel.stop());

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${covel.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });

  /** Compiles a schema of the document (its `$ref`s resolved in the document). */
  const compile = (schema: Json) => ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/')) as object);

  /**
   * The answer's status is one the document lists for the operation, and its JSON body validates
   * against the schema the document gives for that status. Returns the body.
   */
  async function asDocumented(res: Response, method: string, template: string): Promise<Json> {
    const operation = doc.paths[template]?.[method.toLowerCase()];
    expect(operation).toBeDefined();
    expect(Object.keys(operation.responses)).toContain(String(res.status));
    const body = (await res.json()) as Json;
    const schema = operation.responses[String(res.status)].content?.['application/json']?.schema;
    expect(schema).toBeDefined();
    const validate = compile(schema!);
    if (!validate(body)) throw new Error(`${method} ${template} ${res.status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 500)}`);
    return body;
  }

  it('validates as OpenAPI 3.1', () => {
    // the validator is an ES module only (Jest here runs CommonJS): it runs in a node of its own
    const script = `import { Validator } from '@seriousme/openapi-schema-validator';
      import { text } from 'node:stream/consumers';
      const validator = new Validator();
      const result = await validator.validate(JSON.parse(await text(process.stdin)));
      console.log(JSON.stringify({ ...result, version: validator.version }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { input: JSON.stringify(doc), encoding: 'utf8' });
    const result = JSON.parse(out) as { valid: boolean; errors?: unknown; version: string };
    expect(result).toEqual({ valid: true, version: '3.1' });
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it('describes exactly the routes Nest registered (a new endpoint without an entry in openapi/routes.ts fails here)', async () => {
    const app = await createApiApp(covel.engine, { logger: false });
    await app.init();
    try {
      const registered = registeredRoutes(app);
      expect(registered.length).toBeGreaterThan(10);
      expect(documentedRoutes(doc).sort()).toEqual([...new Set(registered)].sort());
    } finally {
      await app.close();
    }
  });

  it('lists the error answers of every route', () => {
    const statuses = (route: string) => {
      const [method, path] = route.split(' ');
      return Object.keys(doc.paths[path][method.toLowerCase()].responses);
    };
    for (const route of documentedRoutes(doc)) {
      expect([route, statuses(route)]).toEqual([route, expect.arrayContaining(['500'])]);
      if (route.includes(' /v1/')) expect([route, statuses(route)]).toEqual([route, expect.arrayContaining(['401', '404', '503'])]);
      if (route.startsWith('POST ')) expect([route, statuses(route)]).toEqual([route, expect.arrayContaining(['400', '409', '413', '415'])]);
      // a route taking an Idempotency-Key answers 422 for a key reused on another request
      const [method, path] = route.split(' ');
      const parameters = (doc.paths[path][method.toLowerCase()] as { parameters?: { name: string }[] }).parameters ?? [];
      if (parameters.some((p) => p.name === 'Idempotency-Key')) expect([route, statuses(route)]).toEqual([route, expect.arrayContaining(['422'])]);
      if (route.includes(' /admin/')) expect([route, statuses(route)]).toEqual([route, expect.arrayContaining(['401', '404', '503'])]);
    }
    expect(statuses('GET /v1/sessions/{id}/turns/{turnId}/audit')).toContain('409');
    expect(statuses('GET /v1/executions/{id}')).toContain('400');
    expect(statuses('GET /v1/sessions/{id}/media/{mediaId}')).toContain('400');
    // every error of every route has the one error body, and a 503 says when to retry
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item))
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400 || op === doc.paths['/health'].get) continue;
          expect(response.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Error' });
          if (status === '503') expect(Object.keys((response as { headers?: object }).headers ?? {})).toEqual(['Retry-After']);
        }
  });

  it('the errors the API answers are the documented ones, with the documented body (400 naming the field, 401, 404, 413, 415)', async () => {
    const { id } = await asDocumented(await call('POST', '/v1/sessions', {}), 'POST', '/v1/sessions');
    const bad = await asDocumented(await call('POST', `/v1/sessions/${id as string}/inputs`, { text: 3 }), 'POST', '/v1/sessions/{id}/inputs');
    expect(bad).toMatchObject({ statusCode: 400, code: 'INVALID_INPUT', issues: [{ path: 'text' }] });
    const noKey = await fetch(`${covel.baseUrl}/v1/sessions/${id as string}/messages`);
    expect(await asDocumented(noKey, 'GET', '/v1/sessions/{id}/messages')).toMatchObject({ statusCode: 401, code: 'MISSING_API_KEY' });
    const unknown = await call('GET', `/v1/sessions/${crypto.randomUUID()}/messages`);
    expect(await asDocumented(unknown, 'GET', '/v1/sessions/{id}/messages')).toMatchObject({ statusCode: 404, code: 'SESSION_NOT_FOUND' });
    const notJson = await call('POST', '/v1/sessions', 'worldId=x', { 'content-type': 'text/plain' });
    expect(await asDocumented(notJson, 'POST', '/v1/sessions')).toMatchObject({ statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    const huge = await call('POST', '/v1/sessions', JSON.stringify({ worldId: 'x'.repeat(covel.engine.config.bodyLimitBytes) }));
    expect(await asDocumented(huge, 'POST', '/v1/sessions')).toMatchObject({ statusCode: 413, code: 'BODY_TOO_LARGE' });
    const badWait = await call('GET', `/v1/executions/${crypto.randomUUID()}?waitMs=soon`);
    expect(await asDocumented(badWait, 'GET', '/v1/executions/{id}')).toMatchObject({ statusCode: 400, issues: [{ path: 'waitMs' }] });
    const badMedia = await call('GET', `/v1/sessions/${id as string}/media/nope`);
    expect(await asDocumented(badMedia, 'GET', '/v1/sessions/{id}/media/{mediaId}')).toMatchObject({ statusCode: 400, issues: [{ path: 'mediaId' }] });
  });

  it("the document's request body schema and the API's validation agree: what the schema refuses is a 400, what it accepts is taken", async () => {
    const { id } = (await (await call('POST', '/v1/sessions', {})).json()) as { id: string };
    const route = '/v1/sessions/{id}/inputs';
    const validate = compile(doc.paths[route].post.requestBody!.content['application/json'].schema);
    const refused: [unknown, string][] = [
      [{}, 'text'],
      [{ text: 3 }, 'text'],
      [{ text: '' }, 'text'],
      [{ text: 'x'.repeat(16_001) }, 'text'],
      [{ text: 'hi', mood: 'grim' }, '(body)'],
      [{ text: 'hi', formValues: [1, 2] }, 'formValues'],
      [{ text: 'hi', formValues: 'door=open' }, 'formValues'],
      [[{ text: 'hi' }], '(body)'],
    ];
    for (const [body, field] of refused) {
      expect([body, validate(body)]).toEqual([body, false]);
      const res = await call('POST', `/v1/sessions/${id}/inputs`, body);
      const answer = await asDocumented(res, 'POST', route);
      expect([body, answer.statusCode, (answer.issues as { path: string }[]).map((i) => i.path)]).toEqual([body, 400, expect.arrayContaining([field])]);
    }
    const accepted: unknown[] = [{ text: 'Light the lantern' }, { text: 'Open the door', formValues: { door: 'north', keys: [1, { brass: null }] } }];
    for (const body of accepted) {
      expect([body, validate(body)]).toEqual([body, true]);
      const res = await call('POST', `/v1/sessions/${id}/inputs`, body);
      expect(await asDocumented(res, 'POST', route)).toEqual({ executionId: expect.any(String), turnId: expect.any(String) });
    }
    // the other bodies: one refused by both, one accepted by both
    const activation = compile(doc.paths['/v1/sessions/{id}/activations'].post.requestBody!.content['application/json'].schema);
    expect(activation({ pluginId: 'Not An Id', runtimeId: 'x' })).toBe(false);
    const refusedActivation = await asDocumented(
      await call('POST', `/v1/sessions/${id}/activations`, { pluginId: 'Not An Id', runtimeId: 'x' }),
      'POST',
      '/v1/sessions/{id}/activations',
    );
    expect(refusedActivation).toMatchObject({ statusCode: 400, issues: [{ path: 'pluginId' }] });
    const session = compile(doc.paths['/v1/sessions'].post.requestBody!.content['application/json'].schema);
    expect(session({ locale: 'pt-BR', pluginSettings: { dice: { sides: 20 } } })).toBe(true);
    expect(session({ locale: 5 })).toBe(false);
    expect(await asDocumented(await call('POST', '/v1/sessions', { locale: 5 }), 'POST', '/v1/sessions')).toMatchObject({ issues: [{ path: 'locale' }] });
    expect((await call('POST', '/v1/sessions', { locale: 'pt-BR' })).status).toBe(201);
  });

  it('every answer of a played turn validates against its documented schema', async () => {
    const created = await asDocumented(await call('POST', '/v1/sessions', { locale: 'en' }, { 'idempotency-key': 'docs-1' }), 'POST', '/v1/sessions');
    const id = created.id as string;
    const { executionId, turnId } = await asDocumented(
      await call('POST', `/v1/sessions/${id}/inputs`, { text: 'Light the lantern' }),
      'POST',
      '/v1/sessions/{id}/inputs',
    );
    const execution = await asDocumented(await call('GET', `/v1/executions/${executionId as string}?waitMs=20000`), 'GET', '/v1/executions/{id}');
    expect(execution.status).toBe('committed');
    const messages = await asDocumented(await call('GET', `/v1/sessions/${id}/messages`), 'GET', '/v1/sessions/{id}/messages');
    expect(messages).toHaveLength(2);
    expect(await asDocumented(await call('GET', `/v1/sessions/${id}/llm-calls`), 'GET', '/v1/sessions/{id}/llm-calls')).toHaveLength(1);
    expect(await asDocumented(await call('GET', `/v1/sessions/${id}/prefix-report`), 'GET', '/v1/sessions/{id}/prefix-report')).toHaveLength(1);
    const audit = await asDocumented(await call('GET', `/v1/sessions/${id}/turns/${turnId as string}/audit`), 'GET', '/v1/sessions/{id}/turns/{turnId}/audit');
    expect(audit.identical).toBe(true);
    // the inspector's views
    const sessions = await asDocumented(await call('GET', '/v1/sessions?limit=5'), 'GET', '/v1/sessions');
    expect(sessions).toEqual(expect.arrayContaining([expect.objectContaining({ sessionId: id, turns: 1 })]));
    const turns = await asDocumented(await call('GET', `/v1/sessions/${id}/turns`), 'GET', '/v1/sessions/{id}/turns');
    expect(turns).toMatchObject([{ turnId, number: 1, status: 'committed', calls: 1 }]);
    const calls = await asDocumented(await call('GET', `/v1/sessions/${id}/turns/${turnId as string}/calls`), 'GET', '/v1/sessions/{id}/turns/{turnId}/calls');
    expect(calls).toHaveLength(1);
    expect(await asDocumented(await call('GET', '/v1/sessions?limit=0'), 'GET', '/v1/sessions')).toMatchObject({ issues: [{ path: 'limit' }] });
    expect((await call('GET', `/v1/sessions/${id}/turns/${executionId as string}/calls`)).status).toBe(404);
    expect(await asDocumented(await fetch(`${covel.baseUrl}/health`), 'GET', '/health')).toMatchObject({ status: 'ok' });
    expect(await asDocumented(await fetch(`${covel.baseUrl}/health/live`), 'GET', '/health/live')).toEqual({ status: 'ok' });
    expect(await asDocumented(await fetch(`${covel.baseUrl}/openapi.json`), 'GET', '/openapi.json')).toEqual(doc);
    const replayed = await call('POST', '/v1/sessions', { locale: 'en' }, { 'idempotency-key': 'docs-1' });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(Object.keys(doc.paths['/v1/sessions'].post.responses['201'] as object)).toContain('headers');
    expect(await asDocumented(replayed, 'POST', '/v1/sessions')).toEqual(created);
    // the player's preferences: the answer and a refusal as documented
    const prefs = `/v1/sessions/${id}/preferences`;
    const changed = await asDocumented(await call('PATCH', prefs, { slots: { story: { toolChoice: 'auto' } } }), 'PATCH', '/v1/sessions/{id}/preferences');
    expect(changed).toEqual({ preferences: { slots: { story: { toolChoice: 'auto' } } } });
    const refused = await asDocumented(await call('PATCH', prefs, { slots: { nope: {} } }), 'PATCH', '/v1/sessions/{id}/preferences');
    expect(refused).toMatchObject({ statusCode: 400, code: 'UNKNOWN_SLOT', issues: [{ path: 'slots.nope' }] });
    const patchBody = compile(doc.paths['/v1/sessions/{id}/preferences'].patch.requestBody!.content['application/json'].schema);
    expect([
      patchBody({ slots: { story: { reasoning: null, toolChoice: 'none' }, fast: null } }),
      patchBody({ slots: { story: { toolChoice: 'any' } } }),
    ]).toEqual([true, false]);
  });

  it('serves the inspector with its own files and its libraries from node_modules: no URL outside the API', async () => {
    const page = await fetch(`${covel.baseUrl}/inspector`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'self'; script-src 'self' 'sha256-[\w+/=]+';/);
    const html = await page.text();
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"|"(\/inspector\/[^"]+)"/g)].map((m) => m[1] ?? m[2]);
    expect(urls).toEqual(expect.arrayContaining(['/inspector/app.js', '/inspector/preact.mjs', '/inspector/htm.mjs', '/inspector/uPlot.esm.js']));
    // inline (data:) or this API's own: nothing loaded from elsewhere
    expect(urls.filter((url) => !url.startsWith('/') && !url.startsWith('data:'))).toEqual([]);
    for (const url of urls.filter((u) => u.startsWith('/'))) expect([url, (await fetch(`${covel.baseUrl}${url}`)).status]).toEqual([url, 200]);
    expect((await fetch(`${covel.baseUrl}/inspector/package.json`)).status).toBe(404);
  });

  it('serves the rendered page with its own files: no URL outside the API', async () => {
    const page = await fetch(`${covel.baseUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    // and the browser is told to load or call nothing from anywhere else
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'self'", "script-src 'self'", "connect-src 'self'"]) expect(csp).toContain(directive);
    const html = await page.text();
    expect(html).not.toMatch(/\/\/|https?:/);
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(urls).toEqual(expect.arrayContaining(['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/init.js']));
    for (const url of urls) {
      expect(url).toMatch(/^\/docs\/[\w.-]+$/);
      expect([url, (await fetch(`${covel.baseUrl}${url}`)).status]).toEqual([url, 200]);
    }
    const bundle = await fetch(`${covel.baseUrl}/docs/swagger-ui-bundle.js`);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await bundle.text()).toContain('SwaggerUIBundle');
    const init = await (await fetch(`${covel.baseUrl}/docs/init.js`)).text();
    expect(init).toContain("url: '/openapi.json'");
    expect(init).toContain('validatorUrl: null');
    expect((await fetch(`${covel.baseUrl}/docs/swagger-ui.css`)).headers.get('content-type')).toMatch(/^text\/css/);
    // only the page's files: nothing else of the package, nothing outside it
    for (const path of ['/docs/index.html', '/docs/package.json', '/docs/..%2Fpackage.json', '/docs/swagger-ui-bundle.js.map']) {
      const res = await fetch(`${covel.baseUrl}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
    }
  });
});
