import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { loadConfig } from '../../libs/engine';
import { devKeyFile } from '../dev-tenant';
import { PlayClient } from './play-client';
import { runMain } from '../process-lifecycle';

/**
 * `npm run play`: play a session against a running engine. COVEL_URL (default
 * http://127.0.0.1:$PORT), COVEL_API_KEY (default: the embedded default's dev key), COVEL_WORLD
 * (default `emberback`; empty for none), COVEL_SESSION_ID to continue a session.
 */
async function main() {
  const config = loadConfig();
  const baseUrl = process.env.COVEL_URL ?? `http://127.0.0.1:${config.port}`;
  const keyFile = devKeyFile(config.dataDir);
  const apiKey = process.env.COVEL_API_KEY ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '');
  if (!apiKey) throw new Error(`no API key: set COVEL_API_KEY, or start the engine with npm start (it writes ${keyFile})`);
  const client = new PlayClient(baseUrl, apiKey);
  const world = process.env.COVEL_WORLD ?? 'emberback';
  const sessionId = process.env.COVEL_SESSION_ID ?? (await client.createSession(world ? { worldId: world } : {})).id;
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
  console.log(`session ${sessionId}${world && !process.env.COVEL_SESSION_ID ? ` in ${world}` : ''} on ${baseUrl}. Type what you do; /quit to leave.`);
  rl.setPrompt('> ');
  rl.prompt();
  for await (const line of rl) {
    const text = line.trim();
    if (text === '/quit') break;
    if (text) {
      try {
        let last = '';
        const story = await client.playTurn(sessionId, text, (status) => {
          if (status !== last && process.stdout.isTTY) process.stdout.write(`  [${status}]\r`);
          last = status;
        });
        console.log(`\n${story}\n`);
      } catch (error) {
        console.log(`! ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    rl.prompt();
  }
  rl.close();
}

runMain(main);
