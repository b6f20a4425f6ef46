import { InProcessQueue } from '../in-process';
import { queueConformance } from './queue-conformance';

queueConformance({
  name: 'in-process',
  create: ({ concurrency, retry, onJobStarted }) => new InProcessQueue({ concurrency, retry, ...(onJobStarted ? { onJobStarted } : {}) }),
});
