import type { Redis, RedisOptions } from 'ioredis';

type IoRedisModule = typeof import('ioredis');

/**
 * ioredis, required at first use rather than at the top: only a process on Redis (BullMQ queues,
 * the Redis delta bus, provider health and rate limits) makes a client, and the embedded default
 * and most engine test files would load it for nothing (~55 modules; building its command table
 * alone is ~0.05 s of CPU per process, and per test file under Jest, which evaluates it anew).
 */
export function ioredis(): IoRedisModule {
  if (loaded === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require('ioredis') as IoRedisModule;
    for (const hook of hooks.splice(0)) hook(loaded);
  }
  return loaded;
}

let loaded: IoRedisModule | undefined;
const hooks: ((module: IoRedisModule) => void)[] = [];

/** A new ioredis client of `url` (ioredis loaded now if it was not). */
export function redisClient(url: string, options: RedisOptions): Redis {
  return new (ioredis().Redis)(url, options);
}

/**
 * Runs `hook` with ioredis once it is loaded: now if it is already (through `ioredis()`, or by
 * anything else of the process that required it: a client made without the engine), else at the
 * first `ioredis()`. For what must see every client, e.g. a hook on its `Command` class.
 */
export function whenIoRedisLoaded(hook: (module: IoRedisModule) => void): void {
  if (loaded === undefined && !requiredElsewhere()) hooks.push(hook);
  else hook(ioredis());
}

/** Whether ioredis is in the module cache (required by something other than `ioredis()`). */
function requiredElsewhere(): boolean {
  try {
    return require.cache[require.resolve('ioredis')] !== undefined;
  } catch {
    return false;
  }
}
