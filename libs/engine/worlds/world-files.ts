import { EngineError, type ErrorCategory, type ErrorIssue } from '../../errors';
import type { WorldProvenance } from '../../events';
import type { WorldDocument } from '../../plugins-sdk';
import { CARD_ERROR_CATEGORY, cardToWorld, exportWorldArchive, importWorldArchive, parseCard, worldToCard } from '../../world-files';
import { validWorldDocument } from './world-document';

/** A world file the API could not read (a bad archive or card): 400 or 413 naming what is wrong; nothing was created. */
export class WorldFileError extends EngineError {
  override readonly issues: readonly ErrorIssue[];
  constructor(
    readonly code: string,
    readonly category: Extract<ErrorCategory, 'invalid' | 'too-large' | 'unsupported'>,
    issues: readonly ErrorIssue[],
  ) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join('; ') || code);
    this.issues = issues;
  }
}

/** The formats a world is exported in: its WORLD.md folder (a zip), or a character card (V2 or V3, JSON or PNG). */
export type WorldExportFormat = 'folder' | 'card-v2' | 'card-v3';

/** A world file to answer: its bytes, type and a file name. */
export interface WorldFile {
  bytes: Uint8Array;
  contentType: string;
  fileName: string;
}

const ZIP_SIGNATURE = [0x50, 0x4b, 0x03, 0x04];
const startsWith = (bytes: Uint8Array, signature: readonly number[]) => signature.every((b, i) => bytes[i] === b);

/**
 * A file read as a world document, the content sniffed (never trusted to its content type): a zip
 * of a WORLD.md folder (what `GET /v1/worlds/:id/export` gives), else a character card (V2 or V3,
 * a PNG carrying it or its JSON). Anything else is a `WorldFileError` naming what is wrong.
 */
export function importedWorld(bytes: Uint8Array, options: { contentType?: string } = {}): { document: WorldDocument; provenance: WorldProvenance } {
  if (bytes.length === 0) throw new WorldFileError('EMPTY_BODY', 'invalid', [{ path: '(body)', message: 'empty: send a character card (PNG or JSON) or a world folder as a zip' }]);
  if (startsWith(bytes, ZIP_SIGNATURE)) {
    const result = importWorldArchive(bytes);
    if (!result.ok) throw new WorldFileError(result.code, result.category, result.issues);
    return { document: validWorldDocument(result.document), provenance: { kind: 'imported', format: 'world-folder' } };
  }
  const card = parseCard(bytes, options.contentType === undefined ? {} : { contentType: options.contentType });
  if (!card.ok) throw new WorldFileError(card.code, CARD_ERROR_CATEGORY[card.code] === 'too-large' ? 'too-large' : 'invalid', card.issues);
  return { document: validWorldDocument(cardToWorld(card.card)), provenance: { kind: 'imported', format: card.version === 'v3' ? 'card-v3' : 'card-v2' } };
}

/**
 * A world's document as a file of `format`: the WORLD.md folder as a zip (deterministic: the same
 * document, the same bytes), or a character card as JSON or PNG (`container`).
 */
export function exportedWorld(options: { id: string; builtIn: boolean; name: string; document: WorldDocument; format: WorldExportFormat; container?: 'json' | 'png' }): WorldFile {
  const slug = options.builtIn ? options.id : folderName(options.name);
  if (options.format === 'folder') return { bytes: exportWorldArchive({ document: options.document, id: slug }), contentType: 'application/zip', fileName: `${slug}.zip` };
  const card = worldToCard(options.document, { format: options.format, container: options.container ?? 'json' });
  if (!card.ok) throw new WorldFileError(card.code, 'invalid', card.issues);
  return { bytes: card.bytes, contentType: card.contentType, fileName: `${slug}.${card.fileExtension}` };
}

/** The folder a tenant's world is exported in: its name made a world id (`world` when nothing is left of it). */
function folderName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return slug === '' ? 'world' : slug;
}
