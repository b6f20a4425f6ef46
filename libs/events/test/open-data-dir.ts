/** Test helper process: opens the PGlite data directory given as argument, says so, and holds it until SIGTERM. */
import { openDatabase } from '..';

openDatabase({ kind: 'pglite', dataDir: process.argv[2] }).then(
  (open) => {
    const keepAlive = setInterval(() => undefined, 60_000);
    process.once('SIGTERM', () => {
      clearInterval(keepAlive);
      void open.close().then(() => process.exit(0));
    });
    console.log(`open ${process.pid}`); // after the handler: a SIGTERM right after this line is handled
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
