import { z } from 'zod';

/**
 * The W3C trace context of the span that enqueued a job, carried in the job's data (both queue
 * drivers). Only the queue reads it: it never enters an event, a prompt or a request.
 */
export const TraceCarrierSchema = z.object({
  traceparent: z.string().min(1).max(256),
  tracestate: z.string().max(1024).optional(),
});
export type TraceCarrier = z.infer<typeof TraceCarrierSchema>;
