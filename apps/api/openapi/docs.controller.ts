import { createReadStream } from 'node:fs';
import { Controller, Get, Header, Param, Res, StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { NotFoundError } from '../../../libs/errors';
import { contentTypeOf, DOCS_CSP, DOCS_HTML, INIT_SCRIPT, isDocsAsset, swaggerUiFile } from './docs-page';

/** `GET /openapi.json` (the OpenAPI 3.1 document) and `GET /docs` (it rendered, with its files). No API key: they describe the API, no tenant's data. */
@Controller()
export class DocsController {
  /** Built once per process: the document depends on the code alone. */
  private document: Record<string, unknown> | null = null;

  @Get('openapi.json')
  @Header('Cache-Control', 'no-cache')
  openApiDocument(): Record<string, unknown> {
    // the routes' and answers' schemas (some 2,000 lines of zod) required here, at the first request,
    // not as the API starts: every process and engine test file that starts one would build them for nothing
    if (this.document === null) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { buildOpenApiDocument } = require('./document') as typeof import('./document');
      this.document = buildOpenApiDocument();
    }
    return this.document;
  }

  @Get('docs')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-cache')
  @Header('Content-Security-Policy', DOCS_CSP)
  page(): string {
    return DOCS_HTML;
  }

  @Get('docs/:asset')
  asset(@Param('asset') asset: string, @Res({ passthrough: true }) res: Response): StreamableFile | string {
    if (!isDocsAsset(asset)) throw new NotFoundError('NOT_FOUND', 'not found');
    res.setHeader('Content-Type', contentTypeOf(asset));
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (asset === 'init.js') return INIT_SCRIPT;
    return new StreamableFile(createReadStream(swaggerUiFile(asset)));
  }
}
