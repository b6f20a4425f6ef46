import { InProcessQueue } from '../in-process';
import { queueConformance } from './queue-conformance';

queueConformance({
  name: 'in-process',
  create: ({ concurrency, retry }) => new InProcessQueue({ concurrency, retry }),
});
