import { changesPath, PluginDataFold, STORY_EVENT_TYPES, type StoredEvent, storyEvents } from '../../events';
import { HistoryFold } from './history-fold';

/**
 * The story's read models folded in memory from the log, as the projections hold them (issue 30):
 * the history (`HistoryFold`) and the plugin data (`PluginDataFold`) of the events that count
 * (`storyEvents`). Applied event by event in log order; after an event that changes the path (a
 * revert, a selected alternative, a cancel, an isolated regeneration) they are folded again from
 * the events so far, as the projections are. `inherited`: a branch's read of its parent, first.
 */
export class StoryFolds {
  private readonly log: StoredEvent[];
  private historyFold = new HistoryFold();
  private pluginDataFold = new PluginDataFold();

  constructor(inherited: readonly StoredEvent[] = []) {
    this.log = [...inherited];
    if (this.log.length > 0) this.refold();
  }

  get history(): HistoryFold {
    return this.historyFold;
  }

  get pluginData(): PluginDataFold {
    return this.pluginDataFold;
  }

  apply(event: StoredEvent): void {
    if (!(STORY_EVENT_TYPES as readonly string[]).includes(event.type)) return;
    this.log.push(event);
    if (changesPath(event)) {
      this.refold();
      return;
    }
    this.historyFold.apply(event);
    this.pluginDataFold.apply(event);
  }

  private refold(): void {
    this.historyFold = new HistoryFold();
    this.pluginDataFold = new PluginDataFold();
    for (const e of storyEvents(this.log)) {
      this.historyFold.apply(e);
      this.pluginDataFold.apply(e);
    }
  }
}
