import { ProviderError } from './types';

/** Maps an SDK error (after the SDK's own retries) to one typed error. */
export function toProviderError(protocol: string, error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  const status = typeof (error as { status?: unknown })?.status === 'number' ? ((error as { status: number }).status as number) : null;
  const retryable = status === null || status === 408 || status === 409 || status === 429 || status >= 500;
  return new ProviderError(`${protocol}: ${error instanceof Error ? error.message : String(error)}`, status, retryable);
}
