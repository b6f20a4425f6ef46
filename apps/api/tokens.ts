/** Nest injection token of the engine composition root. */
export const ENGINE = Symbol('covel.engine');
