import express, { type NextFunction, type Request, type Response } from 'express';
import type { AddressInfo } from 'node:net';
import { type Gate, inOrder } from './in-order';

/** An app with the gates as one layer, a route after it, and an error handler naming the error. */
async function serve(gates: Gate[]) {
  const app = express();
  app.use('/v1', inOrder(...gates));
  app.get('/v1/thing', (_req, res) => void res.json({ reached: true }));
  app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => void res.status(418).json({ error: error.message }));
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/thing`;
  return { get: async () => fetch(url).then(async (r) => ({ status: r.status, body: (await r.json()) as unknown })), close: () => server.close() };
}

describe('inOrder (the /v1 gates as one layer)', () => {
  it('runs sync and async gates in their order, then the route', async () => {
    const seen: string[] = [];
    const app = await serve([
      async (_req, _res, next) => {
        await new Promise((r) => setTimeout(r, 5));
        seen.push('a');
        next();
      },
      (_req, _res, next) => {
        seen.push('b');
        next();
      },
      async (_req, _res, next) => {
        seen.push('c');
        next();
      },
    ]);
    try {
      expect(await app.get()).toEqual({ status: 200, body: { reached: true } });
      expect(seen).toEqual(['a', 'b', 'c']);
    } finally {
      app.close();
    }
  });

  it.each([
    [
      'a sync throw',
      (() => {
        throw new Error('refused');
      }) as Gate,
    ],
    [
      'an async rejection',
      (async () => {
        await Promise.resolve();
        throw new Error('refused');
      }) as Gate,
    ],
    ['next(error)', ((_req, _res, next) => next(new Error('refused'))) as Gate],
  ])('%s goes to the error handler and no later gate runs', async (_name, refusing) => {
    const later = jest.fn((_req: Request, _res: Response, next: NextFunction) => next());
    const app = await serve([async (_req, _res, next) => next(), refusing, later]);
    try {
      expect(await app.get()).toEqual({ status: 418, body: { error: 'refused' } });
      expect(later).not.toHaveBeenCalled();
    } finally {
      app.close();
    }
  });

  it('a gate that answers itself ends the chain there', async () => {
    const later = jest.fn((_req: Request, _res: Response, next: NextFunction) => next());
    const app = await serve([
      async (_req, res) => {
        res.status(409).json({ answered: true });
      },
      later,
    ]);
    try {
      expect(await app.get()).toEqual({ status: 409, body: { answered: true } });
      expect(later).not.toHaveBeenCalled();
    } finally {
      app.close();
    }
  });
});
