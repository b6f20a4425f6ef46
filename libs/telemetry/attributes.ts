/**
 * Span attribute names. Ids (tenant, session, execution, call) are span attributes, never metric
 * labels. Model calls also carry the OpenTelemetry GenAI names (`gen_ai.*`) so that trace UIs that
 * know them show provider, model and token counts.
 */
export const ATTR = {
  tenant: 'covel.tenant.id',
  session: 'covel.session.id',
  execution: 'covel.execution.id',
  /** The execution attempt (the claim a runtime job runs under). */
  attempt: 'covel.attempt',
  /** The queue's try of this job: 1 for the first run, 2 after one failed try, ... */
  jobTry: 'covel.job.try',
  /** What a turn job's run decided: done, later, awaitChildren. */
  step: 'covel.turn.step',
  /** The runtimes a turn job's run started as one stage (`plugin/runtime`, in catalog order). */
  stageRuntimes: 'covel.stage.runtimes',
  /** Who enqueued a turn the engine started by itself: hand-off, sweeper. */
  enqueuedBy: 'covel.enqueued_by',
  plugin: 'covel.plugin.id',
  runtime: 'covel.runtime.id',
  runtimeType: 'covel.runtime.type',
  /** produced, reused, fenced, suspended. */
  runtimeResult: 'covel.runtime.result',
  callId: 'covel.call.id',
  provider: 'gen_ai.system',
  model: 'gen_ai.request.model',
  operation: 'gen_ai.operation.name',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cachedInputTokens: 'covel.usage.cached_input_tokens',
  cacheCreationInputTokens: 'covel.usage.cache_creation_input_tokens',
  finishReason: 'covel.finish_reason',
  toolName: 'covel.tool.name',
  toolCallId: 'covel.tool.call_id',
  toolOk: 'covel.tool.ok',
  toolErrorCode: 'covel.tool.error_code',
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpStatus: 'http.response.status_code',
  urlPath: 'url.path',
} as const;

/** The span names this engine records (docs/operations.md, Traces). */
export const SPAN = {
  turnEnqueue: 'covel.turn.enqueue',
  turnJob: 'covel.turn.job',
  runtimeJob: 'covel.runtime.job',
  functionCall: 'covel.function.call',
  modelCall: 'covel.model.call',
  summaryCall: 'covel.summary.call',
  toolCall: 'covel.tool.call',
} as const;
