export { compactionEvent } from './compaction-event';
