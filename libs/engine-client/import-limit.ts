/** The largest world file read (a card's PNG, a zip of a world folder): `POST /v1/worlds/import` answers 413 above it. */
export const WORLD_IMPORT_LIMIT_BYTES = 16 * 1024 * 1024;
