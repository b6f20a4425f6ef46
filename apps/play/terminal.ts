import { followSession, type SessionStreamEvent } from './event-stream';
import { HELP_TEXT, parseLine } from './commands';
import { ApiError, EngineUnreachableError, type PlayClient } from './play-client';
import { branch, edit, selectAlternative, showAlternatives, type SteeringHost, undo } from './steering';
import { type LineRole, type Paint, painter } from './style';
import { importContentType, importPath, readWorldFile } from './world-file';
import { documentCounts, worldLine, worldName } from './world-lines';
import { displayWidth, hangingLines, StreamWrapper, truncateToWidth, wrapText } from './wrap';

/** Worlds per page of `/worlds`. */
export const WORLDS_PAGE = 20;

export interface PlayTerminalOptions {
  client: PlayClient;
  /** Where everything is printed (stdout). */
  write: (text: string) => void;
  /** Columns to wrap at (already capped: `readableWidth`). */
  width: number;
  /** The world of new sessions (null: none): a built-in world's id or a UUID of one of the tenant's; `/world` and `/import` change it. */
  worldId: string | null;
  /** The language of new sessions (a BCP 47 tag; null: the engine's default); `/locale` changes it. */
  locale?: string | null;
  /** Colours by role (default: none). */
  paint?: Paint;
  /** The output is a terminal: status lines are shown, each replacing the last in place (carriage return, erase line); elsewhere they are left out. */
  tty?: boolean;
  /** After the engine reports a turn ended, how long to wait for the stream to show it before reading the messages instead. */
  streamGraceMs?: number;
}

interface RunningTurn {
  executionId: string;
  turnId: string;
  wrapper: StreamWrapper | null;
  status: string | null;
  done: () => void;
  ended: boolean;
  /** What the turn's bookkeeping plugins did (their tools' summaries), shown after the story. */
  activity: string[];
}

/**
 * The terminal player: follows the session's event stream and prints the story as it is written
 * (word-wrapped), the turn's status and errors in words. A line starting with `/` is a command and
 * is never sent as story input.
 */
export class PlayTerminal {
  private sessionId: string | null = null;
  private follow: AbortController | null = null;
  private turn: RunningTurn | null = null;
  private lastTurnId: string | null = null;
  private streamDown: string | null = null;
  private locale: string | null;
  private worldId: string | null;
  /** Where `/worlds next` goes on (the last page's `nextCursor`); null: `/worlds` starts again. */
  private worldsCursor: string | null = null;
  private readonly paint: Paint;
  /** A status line is on the screen (no newline after it): the next output replaces it. */
  private statusShown = false;

  constructor(private readonly options: PlayTerminalOptions) {
    this.locale = options.locale ?? null;
    this.worldId = options.worldId === null ? null : sameWorldId(options.worldId);
    this.paint = options.paint ?? painter(false);
  }

  get session(): string | null {
    return this.sessionId;
  }

  /** Opens a session (a new one when `sessionId` is absent) and follows its events. */
  async open(sessionId?: string): Promise<void> {
    const id = sessionId ?? (await this.createSession());
    this.lastTurnId = null;
    if (sessionId) await this.showRecent(sessionId); // also checks that it is one of ours
    this.follow?.abort();
    this.sessionId = id;
    const follow = new AbortController();
    this.follow = follow;
    this.streamDown = null;
    void followSession(this.options.client, id, {
      signal: follow.signal,
      onEvent: (event) => this.onEvent(event),
      onConnection: (state) => {
        if (state.connected) this.streamDown = null;
        else if (state.fatal) this.streamDown = state.reason;
      },
    });
    const where = `${await this.worldOf(id, sessionId !== undefined)}${sessionId || !this.locale ? '' : ` (${this.locale})`}`;
    this.say(`Session ${id}${where}. Type what you do; /help for commands.`, 'notice');
    // a new session's only message is its opening (turn 0, committed with the session): where the player is
    if (!sessionId) this.printMessages(await this.options.client.messages(id));
  }

  /** Shows a line the player typed while a turn was being written, once that turn is on the screen. */
  echo(prompt: string, line: string): void {
    this.write(`${this.paint('player', `${prompt}${line}`)}\n`);
  }

  /** Handles one line; false when the player leaves. */
  async handle(line: string): Promise<boolean> {
    const parsed = parseLine(line);
    try {
      switch (parsed.kind) {
        case 'empty':
          return true;
        case 'unknown':
          this.say(`Unknown command ${parsed.name}: nothing was sent to the story.\n${HELP_TEXT}`);
          return true;
        case 'input':
          await this.play(() => this.options.client.submit(this.requireSession(), parsed.text));
          return true;
        case 'command':
          switch (parsed.name) {
            case 'quit':
              return false;
            case 'help':
              this.say(HELP_TEXT, 'story');
              return true;
            case 'new':
              await this.open();
              return true;
            case 'session':
              if (!parsed.arg) this.say('Which session? /session <id>');
              else await this.open(parsed.arg);
              return true;
            case 'locale':
              if (!parsed.arg)
                this.say(`New sessions are in ${this.locale ?? "the engine's default language"}. /locale <tag> starts one in another, e.g. /locale zh-CN`);
              else {
                const previous = this.locale;
                this.locale = parsed.arg;
                await this.open().catch((error: unknown) => {
                  this.locale = previous; // refused (not a language tag): keep the last one
                  throw error;
                });
              }
              return true;
            case 'worlds':
              await this.listWorlds(parsed.arg);
              return true;
            case 'world':
              if (!parsed.arg) this.say(`New sessions are in ${this.worldId ?? 'no world'}. /world <id> starts one in another; /worlds lists them.`);
              else await this.switchWorld(sameWorldId(parsed.arg));
              return true;
            case 'import':
              await this.importWorld(parsed.arg);
              return true;
            case 'retry':
              await this.retry();
              return true;
            case 'alternatives':
              await showAlternatives(this.steering);
              return true;
            case 'select':
              await selectAlternative(this.steering, parsed.arg);
              return true;
            case 'undo':
              await undo(this.steering, parsed.arg);
              return true;
            case 'edit':
            case 'edit!':
              await edit(this.steering, parsed.arg, parsed.name === 'edit!');
              return true;
            case 'branch':
              await branch(this.steering, parsed.arg);
              return true;
          }
      }
    } catch (error) {
      this.say(`! ${describe(error)}`, 'error');
    }
    return true;
  }

  close(): void {
    this.follow?.abort();
    this.follow = null;
  }

  /** What /select, /undo, /edit and /branch (./steering) use of this terminal. */
  private get steering(): SteeringHost {
    return {
      client: this.options.client,
      width: this.options.width,
      requireSession: () => this.requireSession(),
      latestTurn: () => this.lastTurnId,
      setLatestTurn: (turnId) => (this.lastTurnId = turnId),
      say: (text, role) => this.say(text, role),
      printMessages: (messages) => this.printMessages(messages),
      play: (start) => this.play(start),
      open: (sessionId) => this.open(sessionId),
    };
  }

  /** A turn is being written (Ctrl-C stops it rather than leaving). */
  get turnRunning(): boolean {
    return this.turn !== null && !this.turn.ended;
  }

  /**
   * Stops the turn being written (Ctrl-C): `POST /v1/executions/:id/cancel`. The stream's `cancelled`
   * event (or the long-poll, when the stream is down) ends the turn and says it stopped; a turn that
   * ended first (409 `EXECUTION_ENDED`) ends as it did.
   */
  async stopTurn(): Promise<void> {
    const turn = this.turn;
    if (!turn || turn.ended) return;
    this.status(turn, 'stopping…', true);
    try {
      await this.options.client.cancel(turn.executionId);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'EXECUTION_ENDED') return;
      this.say(`! The turn could not be stopped: ${describe(error)}`, 'error');
    }
  }

  /** A new session in the current world and language; an unknown world is said in words. */
  private async createSession(): Promise<string> {
    const worldId = this.worldId;
    try {
      const { id } = await this.options.client.createSession({ ...(worldId ? { worldId } : {}), ...(this.locale ? { locale: this.locale } : {}) });
      return id;
    } catch (error) {
      if (worldId && error instanceof ApiError && error.code === 'WORLD_NOT_FOUND')
        throw new Error(`There is no world "${worldId}" for you: /worlds lists the worlds you can play (a built-in world's name, or the id of one of yours).`);
      throw error;
    }
  }

  /**
   * Where a session plays, for its first line: ` in emberback` (a built-in world), ` in <name>,
   * revision 3` (a world of the tenant's, the revision the session runs), or nothing (no world).
   * Only words: a lookup that fails leaves the id (or nothing, for a session continued).
   */
  private async worldOf(sessionId: string, continued: boolean): Promise<string> {
    const session = await this.options.client.session(sessionId).catch(() => null);
    const worldId = session ? session.worldId : continued ? null : this.worldId;
    if (!worldId) return '';
    const revision = session?.worldRevision ?? null;
    if (revision === null) return ` in ${worldId}`;
    const world = await this.options.client.world(worldId, revision).catch(() => null);
    return ` in ${world ? worldName(world.name) : worldId}, revision ${revision}`;
  }

  /** `/worlds`: the first page of the worlds the tenant can play; `/worlds next`: the page after the last one shown. */
  private async listWorlds(arg: string): Promise<void> {
    const next = /^(next|more)$/i.test(arg);
    if (arg && !next) return this.say('/worlds lists the worlds you can play; /worlds next shows the next page.');
    if (next && !this.worldsCursor) return this.say('No more worlds: /worlds lists them from the start.');
    const page = await this.options.client.worlds({ limit: WORLDS_PAGE, ...(next && this.worldsCursor ? { cursor: this.worldsCursor } : {}) });
    this.worldsCursor = page.nextCursor;
    if (page.items.length === 0) return this.say('No world to play: /import <file> brings one in (a character card or a world folder as a .zip).');
    const width = this.options.width;
    this.say(next ? 'More worlds:' : 'Worlds you can play (built-in first, then yours):', 'story');
    this.writeLines(page.items.map((world) => hangingLines(worldLine(world), width, '  - ')).join(''), 'story');
    this.say(page.nextCursor ? 'More: /worlds next. Play one: /world <id>.' : 'Play one: /world <id> (or npm run play -- --world <id>).');
  }

  /** `/world <id>`: a new session in that world; a world that cannot be played keeps the last one. */
  private async switchWorld(worldId: string): Promise<void> {
    const previous = this.worldId;
    this.worldId = worldId;
    await this.open().catch((error: unknown) => {
      this.worldId = previous;
      throw error;
    });
  }

  /** `/import <file>`: the file sent as it is to `POST /v1/worlds/import`, the new world shown, and a new session in it. */
  private async importWorld(arg: string): Promise<void> {
    if (!arg) return this.say('Which file? /import <file>: a character card (PNG or JSON) or a world folder as a .zip.');
    const path = importPath(arg);
    const file = await readWorldFile(path);
    if (!file.ok) return this.say(`! Nothing imported: ${file.message}.`, 'error');
    let world: Awaited<ReturnType<PlayClient['importWorld']>>;
    try {
      world = await this.options.client.importWorld(file.bytes, importContentType(path));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      // each problem the server named on a line of its own (where: a card's field, `(body)`, a PNG chunk), else its message
      const code = error.code ? ` (${error.code})` : '';
      if (error.issues.length === 0) return this.say(`! ${file.name} was not imported${code}: ${error.serverMessage}`, 'error');
      const issues = error.issues.map((i) => `  ${i.path ? `${i.path}: ` : ''}${i.message}`);
      return this.say([`! ${file.name} was not imported${code}:`, ...issues].join('\n'), 'error');
    }
    this.say(`Imported ${file.name}, a world of yours now:`);
    this.writeLines(hangingLines(worldLine({ ...world, ...documentCounts(world.document) }), this.options.width, '  - '), 'story');
    await this.switchWorld(world.id);
  }

  private async retry(): Promise<void> {
    const turnId = this.lastTurnId;
    if (!turnId) return this.say('Nothing to retry yet: play a turn first.');
    try {
      await this.play(() => this.options.client.retry(this.requireSession(), turnId));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404 && error.code !== 'SESSION_NOT_FOUND' && error.code !== 'TURN_NOT_FOUND') {
        return this.say('! This engine cannot write a turn again yet (no retry route): /retry needs a newer server.', 'error');
      }
      throw error;
    }
  }

  /** Starts a turn (an input or a retry) and prints it until it is committed or has failed. */
  private async play(start: () => Promise<{ executionId: string; turnId: string }>): Promise<void> {
    const { executionId, turnId } = await start();
    this.lastTurnId = turnId;
    const finished = new Promise<void>((resolve) => {
      this.turn = { executionId, turnId, wrapper: null, status: null, done: resolve, ended: false, activity: [] };
    });
    const turn = this.turn!;
    // the engine's own word that it ended (a long-poll): if the stream is down, the messages are read instead
    const stopPolling = new AbortController();
    const polled = this.options.client
      .waitFor(executionId, 600_000, undefined, stopPolling.signal)
      .then((status) => (status === 'cancelled' ? ('cancelled' as const) : ('committed' as const)))
      .catch((error: unknown) => error);
    const first = await Promise.race([finished.then(() => 'stream' as const), polled]);
    stopPolling.abort();
    if (first !== 'stream' && !turn.ended) {
      const grace = this.options.streamGraceMs ?? 3_000;
      const late = await Promise.race([finished.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), grace).unref())]);
      if (!late && !turn.ended) {
        turn.ended = true;
        turn.wrapper?.end();
        if (first === 'committed') await this.printStory(turnId);
        else if (first === 'cancelled') {
          await this.printStory(turnId); // what a stop kept, if anything
          this.say(STOPPED);
        } else this.say(`! ${describe(first)}`, 'error');
        if (this.streamDown) this.say(`(live updates unavailable: ${this.streamDown})`, 'notice');
      }
    }
    this.clearStatus();
    this.turn = null;
  }

  private onEvent(event: SessionStreamEvent): void {
    const turn = this.turn;
    if (!turn || turn.ended || event.data.executionId !== turn.executionId) return;
    switch (event.type) {
      case 'status':
        if (event.data.status === 'queued') this.status(turn, 'waiting for a worker…');
        else if (event.data.status === 'running') this.status(turn, 'the story is being written…');
        return;
      case 'tool':
        if (event.data.phase === 'called') this.status(turn, `using ${String(event.data.name)}…`, true);
        if (event.data.phase === 'completed' && typeof event.data.summary === 'string' && event.data.summary.trim() !== '')
          turn.activity.push(`${String(event.data.pluginId)}: ${event.data.summary.trim()}`);
        return;
      case 'delta':
        if (!turn.wrapper) {
          this.write('\n');
          turn.wrapper = new StreamWrapper(this.options.width, (text) => this.write(text));
        }
        turn.wrapper.push(String(event.data.text ?? ''));
        return;
      case 'committed': {
        turn.ended = true;
        if (turn.wrapper) {
          turn.wrapper.end();
          this.write('\n');
        } else {
          const messages = Array.isArray(event.data.messages) ? (event.data.messages as { role?: string; outputKind?: string | null; text?: string }[]) : [];
          this.printMessages(messages);
        }
        // the plugins at work: dimensions that changed, characters and memories noted (one line each)
        for (const line of turn.activity) this.writeLines(hangingLines(line, this.options.width, '  · '), 'bookkeeper');
        turn.done();
        return;
      }
      case 'cancelled': {
        turn.ended = true;
        if (turn.wrapper) {
          turn.wrapper.end();
          this.write('\n');
        }
        const kept = Array.isArray(event.data.messages) && event.data.messages.length > 0;
        this.say(kept ? STOPPED_KEPT : STOPPED);
        turn.done();
        return;
      }
      case 'failed': {
        turn.ended = true;
        turn.wrapper?.end();
        const error = event.data.error as { message?: string; code?: string } | undefined;
        this.say(
          `! The turn failed: ${error?.message ?? 'unknown error'}${error?.code ? ` (${error.code})` : ''}. Type /retry to try it again, or go on.`,
          'error',
        );
        turn.done();
        return;
      }
    }
  }

  private status(turn: RunningTurn, text: string, always = false): void {
    if (turn.status === text && !always) return;
    turn.status = text;
    if (turn.wrapper || !this.options.tty) return; // the story has started: it speaks for itself
    // one row (truncated), so that the carriage return and erase-line of the next output remove all of it
    this.options.write(`\r\u001b[2K${this.paint('status', truncateToWidth(`  [${text}]`, this.options.width - 1))}`);
    this.statusShown = true;
  }

  /** Removes the status line, if one is shown: it never stays in the transcript. */
  private clearStatus(): void {
    if (!this.statusShown) return;
    this.statusShown = false;
    this.options.write('\r\u001b[2K');
  }

  /** Everything printed goes through here: a status line on the screen is replaced first. */
  private write(text: string): void {
    this.clearStatus();
    this.options.write(text);
  }

  /** Lines (each ending in a newline), each coloured as `role`: colour codes never span a newline. */
  private writeLines(text: string, role: LineRole): void {
    this.write(text.replace(/[^\n]+/g, (line) => this.paint(role, line)));
  }

  private async printStory(turnId: string): Promise<void> {
    const messages = await this.options.client.messages(this.requireSession());
    this.printMessages(messages.filter((m) => m.turnId === turnId));
  }

  private printMessages(messages: readonly { role?: string; outputKind?: string | null; text?: string }[]): void {
    const story = messages.filter((m) => m.role === 'assistant' && m.outputKind === 'story' && m.text).map((m) => m.text!);
    if (story.length === 0) return;
    this.write(`\n${story.map((t) => wrapText(t, this.options.width)).join('\n')}\n`);
  }

  private async showRecent(sessionId: string): Promise<void> {
    const messages = await this.options.client.messages(sessionId);
    const story = messages.filter((m) => m.role === 'assistant' && m.outputKind === 'story').slice(-2);
    if (story.length > 0) this.write(`${story.map((m) => wrapText(m.text, this.options.width)).join('\n')}\n`);
    // the latest player turn (what /retry and /alternatives name): never the opening, turn 0
    const last = [...messages].reverse().find((m) => m.sourceType === 'player');
    if (last) this.lastTurnId = last.turnId;
  }

  private requireSession(): string {
    if (!this.sessionId) throw new Error('no session: /new starts one');
    return this.sessionId;
  }

  /** A line of its own per line of `text`, each wrapped to the width (an indented line's rows keep its indentation). */
  private say(text: string, role: LineRole = 'notice'): void {
    const width = this.options.width;
    this.writeLines(
      text
        .split('\n')
        .map((line) => {
          if (displayWidth(line) <= width) return `${line}\n`;
          const indent = /^ */.exec(line)![0];
          return indent ? hangingLines(line.slice(indent.length), width, indent) : wrapText(line, width);
        })
        .join(''),
      role,
    );
  }
}

/** What the player reads when a turn was stopped (Ctrl-C). */
const STOPPED = 'Stopped: this turn was cancelled and nothing of it was kept. Type what you do next.';
const STOPPED_KEPT = 'Stopped: the story written so far is kept as this turn. Type what you do next.';

/** A world id as the engine keeps it: a UUID in lowercase (the id of a tenant's world), anything else as typed. */
function sameWorldId(id: string): string {
  const trimmed = id.trim();
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(trimmed) ? trimmed.toLowerCase() : trimmed;
}

function describe(error: unknown): string {
  if (error instanceof ApiError || error instanceof EngineUnreachableError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
