import { InProcessQueue } from '../in-process';
import { queueConformance } from './queue-conformance';

queueConformance({
  name: 'in-process',
  create: ({ concurrency, retry, onJobStarted, fairness }) =>
    new InProcessQueue({ concurrency, retry, ...(onJobStarted ? { onJobStarted } : {}), ...(fairness ? { fairness } : {}) }),
});
