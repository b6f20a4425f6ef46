/* eslint-disable @typescript-eslint/no-require-imports -- prom-client's classes from their own modules (below) */
import type * as PromClient from 'prom-client';

/*
 * The four prom-client classes the metrics use, each from its own module of the package (the same
 * classes its index exports: test/prom-client.test.ts checks it). Its index also loads what the
 * engine never uses: the default process metrics (and @opentelemetry/api through them), the
 * Pushgateway, the cluster aggregator: ~75 modules and ~0.08 s of CPU a process, and per test
 * file under Jest, which evaluates them anew.
 */
export const Registry = require('prom-client/lib/registry') as typeof PromClient.Registry;
export type Registry = PromClient.Registry;
export const Counter = require('prom-client/lib/counter') as typeof PromClient.Counter;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export const Gauge = require('prom-client/lib/gauge') as typeof PromClient.Gauge;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
export const Histogram = require('prom-client/lib/histogram') as typeof PromClient.Histogram;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;
