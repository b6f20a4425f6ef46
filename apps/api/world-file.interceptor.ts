import { type CallHandler, type ExecutionContext, HttpException, Injectable, type NestInterceptor } from '@nestjs/common';
import type { FileInterceptor } from '@nestjs/platform-express';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { EngineError, InvalidInputError } from '../../libs/errors';
import { rawBodyOf } from './capped-body';
import { BodyTooLargeError } from './request-errors';
import { WORLD_IMPORT_LIMIT_BYTES } from './world-limits';

/** The multipart field that carries the file. */
export const WORLD_FILE_FIELD = 'file';

/** What a multipart upload may hold: one file, in the field `file`, nothing else. */
const FORM_RULE = `a multipart upload holds one file, in the field "${WORLD_FILE_FIELD}", and nothing else`;

/**
 * `POST /v1/worlds/import` as a multipart form: multer (through Nest's `FileInterceptor`) reads the
 * `file` field from the body `cappedRawBody` already read (never from the socket again, so a form
 * past the limit was refused before any of it was parsed). What multer refuses (two files, another
 * field, a broken form) is an engine error like any other: a 400 `BAD_MULTIPART` naming the field
 * `file`, or the 413 `BODY_TOO_LARGE` of every body past its limit — not Nest's own error shape.
 */
@Injectable()
export class WorldFileInterceptor implements NestInterceptor {
  private multer: NestInterceptor | undefined;

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    try {
      this.multer ??= await multerInterceptor();
      return await this.multer.intercept(context, next);
    } catch (error) {
      throw uploadError(error);
    }
  }
}

/**
 * Nest's multer interceptor, made at the first upload rather than when the API starts: every API
 * process (and `npm start`, and each test file that starts an engine) would otherwise load multer and
 * busboy (26 modules, ~0.02 s of CPU) for a route few requests take. The runtime image's build and
 * CI's runtime smoke load this module, so a missing or moved file fails there, not at a user's upload.
 */
async function multerInterceptor(): Promise<NestInterceptor> {
  const { FileInterceptor: fileInterceptor } = (await import('@nestjs/platform-express/multer/interceptors/file.interceptor')) as {
    FileInterceptor: typeof FileInterceptor;
  };
  return new (fileInterceptor(WORLD_FILE_FIELD, {
    limits: { fileSize: WORLD_IMPORT_LIMIT_BYTES, files: 1, fields: 0, parts: 2 },
    // multer's own option (Nest's MulterOptions type does not name it): feed busboy the bytes already read
    ...{ streamHandler: (req: Request, busboy: NodeJS.WritableStream) => busboy.end(rawBodyOf(req) ?? Buffer.alloc(0)) },
  }))();
}

function uploadError(error: unknown): unknown {
  if (error instanceof EngineError) return error;
  if (error instanceof HttpException && error.getStatus() === 413) return new BodyTooLargeError(WORLD_IMPORT_LIMIT_BYTES);
  // multer's messages are fixed ("Too many files", "Unexpected field - <field>"): the field the client named is not echoed
  const reason = error instanceof Error ? error.message.split(' - ')[0].slice(0, 100) : 'not a readable multipart form';
  return new InvalidInputError([{ path: WORLD_FILE_FIELD, message: `${reason}: ${FORM_RULE}` }], 'BAD_MULTIPART');
}
