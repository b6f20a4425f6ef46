import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { loadConfig } from '../../libs/engine';
import { devKeyFile } from '../dev-tenant';
import { PlayClient } from './play-client';
import { PlayTerminal } from './terminal';
import { readableWidth } from './wrap';
import { runMain } from '../process-lifecycle';

/**
 * `npm run play`: play a session against a running engine, the story streamed as it is written.
 * COVEL_URL (default http://127.0.0.1:$PORT), COVEL_API_KEY (default: the embedded default's dev
 * key), COVEL_WORLD (default `emberback`; empty for none), COVEL_SESSION_ID to continue a session.
 * Lines are wrapped at the terminal's width (COLUMNS when not a terminal), at most 100 columns.
 */
async function main() {
  const config = loadConfig();
  const baseUrl = process.env.COVEL_URL ?? `http://127.0.0.1:${config.port}`;
  const keyFile = devKeyFile(config.dataDir);
  const apiKey = process.env.COVEL_API_KEY ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '');
  if (!apiKey) throw new Error(`no API key: set COVEL_API_KEY, or start the engine with npm start (it writes ${keyFile})`);
  const columns = process.stdout.columns ?? (Number(process.env.COLUMNS) || undefined);
  const terminal = new PlayTerminal({
    client: new PlayClient(baseUrl, apiKey),
    write: (text) => process.stdout.write(text),
    width: readableWidth(columns),
    worldId: process.env.COVEL_WORLD ?? 'emberback',
  });
  await terminal.open(process.env.COVEL_SESSION_ID || undefined);
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
  rl.setPrompt('> ');
  rl.prompt();
  try {
    for await (const line of rl) {
      if (!(await terminal.handle(line))) break;
      rl.prompt();
    }
  } finally {
    terminal.close();
    rl.close();
  }
}

runMain(main);
