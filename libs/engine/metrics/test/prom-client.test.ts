import * as PromClient from 'prom-client';
import { Counter, Gauge, Histogram, Registry } from '../prom-client';

/**
 * The metrics take prom-client's classes from the package's own modules, not its index (which also
 * loads its default metrics, @opentelemetry/api through them, its Pushgateway and cluster
 * aggregator): they must be the very classes the index exports, so an upgrade that moves them fails here.
 */
describe("prom-client's classes, from their modules", () => {
  it('are the classes its index exports', () => {
    // the same functions (toEqual compares functions by identity)
    expect({ Counter, Gauge, Histogram, Registry }).toEqual({
      Counter: PromClient.Counter,
      Gauge: PromClient.Gauge,
      Histogram: PromClient.Histogram,
      Registry: PromClient.Registry,
    });
  });

  it('count on a registry of their own, as the index classes do', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'covel_test_total', help: 'a test counter', labelNames: ['kind'], registers: [registry] });
    counter.inc({ kind: 'a' }, 2);
    expect(await registry.metrics()).toContain('covel_test_total{kind="a"} 2');
    expect(PromClient.register.getSingleMetric('covel_test_total')).toBeUndefined(); // not in prom-client's global registry
  });
});
