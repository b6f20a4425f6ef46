import type { NextFunction, Request, Response } from 'express';

/** An Express middleware as the gates are written: it calls `next()` to pass, throws (or rejects) to refuse. */
export type Gate = (req: Request, res: Response, next: NextFunction) => void | Promise<void>;

/**
 * Several gates of one mount as one Express layer, run in the order given, exactly as separate layers
 * would run them: each one's `next()` goes on to the following (`next(error)` and a throw or rejection
 * go to the error handlers, the rest skipped), a gate that neither passes nor throws ends the chain
 * there (every gate here calls `next` before it returns or its promise settles). One layer instead of five on every `/v1` request: the router matches the mount once, and a
 * synchronous gate costs no promise (issue 33: CPU per turn in the API).
 */
export function inOrder(...gates: readonly Gate[]): Gate {
  return (req, res, next) => {
    const run = (from: number): void | Promise<void> => {
      for (let i = from; i < gates.length; i++) {
        let passed = false;
        let failure: unknown;
        const result = gates[i](req, res, (error?: unknown) => {
          passed = true;
          failure = error;
        });
        if (result instanceof Promise) return result.then(() => after(passed, failure, i + 1));
        if (!passed) return;
        if (failure !== undefined) return next(failure);
      }
      next();
    };
    const after = (passed: boolean, failure: unknown, following: number): void | Promise<void> => {
      if (!passed) return;
      if (failure !== undefined) return next(failure);
      return run(following);
    };
    return run(0);
  };
}
