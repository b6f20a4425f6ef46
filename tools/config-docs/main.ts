import { join } from 'node:path';
import { writeBlocks } from '../docs-block';
import { configBlocks, CONFIGURATION_DOC } from './render';

/** `npm run docs:config`: rewrites docs/configuration.md's generated blocks from the config schemas. */
async function main() {
  const file = join(__dirname, '..', '..', CONFIGURATION_DOC);
  const changed = await writeBlocks(file, configBlocks());
  console.log(`${changed ? 'rewrote' : 'already current:'} ${CONFIGURATION_DOC}`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
