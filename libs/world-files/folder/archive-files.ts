/** The file of a world folder that holds the world. */
export const WORLD_FILE = 'WORLD.md';
/** The offline emulator's reply book beside it (optional; `libs/engine` reads `worlds/<id>/emulator-replies.json`). */
export const REPLY_BOOK_FILE = 'emulator-replies.json';
