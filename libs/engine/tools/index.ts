export { TOOL_ERROR_CODES } from './port';
export type { ToolErrorCode, ToolOutcome, ToolRunContext, ToolSet } from './port';
