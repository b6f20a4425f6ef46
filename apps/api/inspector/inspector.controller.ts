import { createReadStream } from 'node:fs';
import { Controller, Get, Header, Param, Res, StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { NotFoundError } from '../../../libs/errors';
import { INSPECTOR_CSP, INSPECTOR_HTML, inspectorContentType, inspectorFile, isInspectorAsset } from './inspector-page';

/** `GET /inspector` (the page) and its files. No API key here: the page asks for it and sends it on each `/v1` read. */
@Controller('inspector')
export class InspectorController {
  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-cache')
  @Header('Content-Security-Policy', INSPECTOR_CSP)
  page(): string {
    return INSPECTOR_HTML;
  }

  @Get(':asset')
  asset(@Param('asset') asset: string, @Res({ passthrough: true }) res: Response): StreamableFile {
    if (!isInspectorAsset(asset)) throw new NotFoundError('NOT_FOUND', 'not found');
    res.setHeader('Content-Type', inspectorContentType(asset));
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    return new StreamableFile(createReadStream(inspectorFile(asset)));
  }
}
