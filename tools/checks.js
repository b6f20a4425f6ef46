// `npm test`'s static checks side by side: each npm script given runs at once (each is one thread: on two
// cores the pair takes about as long as the longer one, not the sum); each one's output is printed whole
// when it ends; fails if any failed. Usage: node tools/checks.js typecheck lint
const { spawn } = require('node:child_process');

const scripts = process.argv.slice(2);
const runs = scripts.map(
  (script) =>
    new Promise((resolve) => {
      const child = spawn('npm', ['run', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      const chunks = [];
      child.stdout.on('data', (chunk) => chunks.push(chunk));
      child.stderr.on('data', (chunk) => chunks.push(chunk));
      child.on('error', (error) => chunks.push(Buffer.from(`${error.message}\n`)));
      child.on('close', (code, signal) => {
        const ok = code === 0;
        process.stdout.write(`> npm run ${script}: ${ok ? 'ok' : `failed (${signal ?? `exit ${code}`})`}\n`);
        process.stdout.write(Buffer.concat(chunks));
        resolve(ok);
      });
    }),
);
Promise.all(runs).then((results) => {
  process.exitCode = results.every(Boolean) ? 0 : 1;
});
