import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { loadEngineLocation } from '../../libs/engine-client';
import { readPlayOptions, USAGE } from './options';
import { PlayClient } from './play-client';
import { colorWanted, painter } from './style';
import { PlayTerminal } from './terminal';
import { readableWidth } from './wrap';
import { runMain } from '../process-lifecycle';

/**
 * `npm run play [-- --world <id> --locale <tag> --session <id>]`: play a session against a running
 * engine, the story streamed as it is written (USAGE in ./options says where the engine's URL and
 * key come from). Lines are wrapped at the terminal's width (COLUMNS when not a terminal), at most
 * 100 columns; colour on a terminal unless NO_COLOR is set.
 */
async function main() {
  // of the engine's settings, only where it is (PORT, COVEL_DATA_DIR): another one set wrong is the engine's business
  const options = readPlayOptions(process.argv.slice(2), process.env, loadEngineLocation());
  if (options.help) return void process.stdout.write(`${USAGE}\n`);
  if (!options.apiKey) throw new Error(`no API key: set COVEL_API_KEY, or start the engine with npm start (it writes ${options.keyFile})`);
  const columns = process.stdout.columns ?? (Number(process.env.COLUMNS) || undefined);
  const paint = painter(colorWanted(process.stdout, process.env));
  const terminal = new PlayTerminal({
    client: new PlayClient(options.engine.url, options.apiKey, options.engine.source),
    write: (text) => process.stdout.write(text),
    width: readableWidth(columns),
    worldId: options.worldId,
    locale: options.locale,
    paint,
    tty: process.stdout.isTTY === true,
  });
  await terminal.open(options.sessionId ?? undefined);
  await readLines(terminal, paint('player', '> '));
}

/**
 * Reads the player's lines one turn at a time. On a terminal, what is typed while a turn is being
 * written is not echoed then (it would land in the middle of the story): each such line is shown
 * after the turn it waited for, just before it is handled; a line still being typed comes back with the prompt.
 * Ctrl-C while a turn is being written stops it (`POST /v1/executions/:id/cancel`).
 */
async function readLines(terminal: PlayTerminal, prompt: string): Promise<void> {
  const echo = new Writable({
    write(chunk, _encoding, done) {
      if (!busy) process.stdout.write(chunk);
      done();
    },
  });
  Object.defineProperty(echo, 'columns', { get: () => process.stdout.columns });
  process.stdout.on('resize', () => echo.emit('resize'));
  const interactive = process.stdin.isTTY === true;
  const rl = createInterface({ input: process.stdin, output: interactive ? echo : process.stdout, terminal: interactive });
  rl.setPrompt(prompt);
  // Ctrl-C while a turn is being written stops that turn; anywhere else it leaves, as readline does without this listener
  rl.on('SIGINT', () => {
    if (terminal.turnRunning) void terminal.stopTurn();
    else rl.close();
  });
  const queue: { line: string; echoed: boolean }[] = [];
  let busy = false;
  let closed = false;
  const finished = new Promise<void>((resolve) => {
    const pump = async () => {
      if (busy) return;
      busy = true;
      try {
        for (let next = queue.shift(); next; next = queue.shift()) {
          if (!next.echoed) terminal.echo(prompt, next.line);
          if (!(await terminal.handle(next.line))) {
            closed = true;
            break;
          }
        }
      } finally {
        busy = false;
      }
      if (closed) return resolve();
      rl.prompt(true);
    };
    rl.on('line', (line) => {
      queue.push({ line, echoed: !busy || !interactive });
      void pump();
    });
    rl.on('close', () => {
      closed = true;
      if (!busy) resolve();
    });
    rl.prompt();
  });
  try {
    await finished;
  } finally {
    terminal.close();
    rl.close();
  }
}

runMain(main);
