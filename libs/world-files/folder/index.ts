export { worldMarkdown } from './world-markdown';
export type { WorldMarkdownOptions } from './world-markdown';
export { exportWorldArchive } from './export-archive';
export type { ExportWorldArchiveOptions } from './export-archive';
export { importWorldArchive } from './import-archive';
export { WORLD_ARCHIVE_LIMITS } from './import-result';
export type { ImportWorldArchiveResult, WorldArchiveErrorCode, WorldArchiveLimits } from './import-result';
export { isWorldId } from './world-id';
