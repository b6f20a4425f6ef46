import { AsyncLocalStorage } from 'node:async_hooks';
import type { LogFields } from './logger';

/**
 * The ids of the job a line is logged in (tenant, session, execution, attempt, runtime, call):
 * the worker opens a scope per turn or runtime job (`withLogScope`) and the engine's logger adds
 * the current scope's fields to every line, whichever code logs it (the turn's steps, the agent
 * loop, a plugin's host, the delta bus). Fields learnt later in the job (the attempt a claim
 * took, the id of the model call being sent) are added to the open scope (`addToLogScope`).
 */
const storage = new AsyncLocalStorage<Record<string, unknown>>();

/**
 * Runs `work` in a new scope holding only `fields` (absent values left out). A job's scope never
 * inherits the enclosing one: the in-process queue starts the next job from inside the job that
 * enqueued it, and that job's attempt, runtime and call ids are not the next one's.
 */
export function withLogScope<T>(fields: LogFields, work: () => T): T {
  return storage.run(defined(fields), work);
}

/** Adds fields to the open scope (nothing outside one): later lines of the job carry them. */
export function addToLogScope(fields: LogFields): void {
  const scope = storage.getStore();
  if (scope) Object.assign(scope, defined(fields));
}

/** The open scope's fields ({} outside one). */
export function logScope(): LogFields {
  return storage.getStore() ?? {};
}

function defined(fields: LogFields): Record<string, unknown> {
  // a plain loop: every job of a worker opens a scope, and a model call adds to it
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const value = (fields as Record<string, unknown>)[key];
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out;
}
