export { worldMarkdown, exportWorldArchive, importWorldArchive, isWorldId, WORLD_ARCHIVE_LIMITS } from './folder';
export type { WorldMarkdownOptions, ExportWorldArchiveOptions, ImportWorldArchiveResult, WorldArchiveErrorCode, WorldArchiveLimits } from './folder';
