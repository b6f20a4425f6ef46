import { TooManyRequestsError } from '../../../libs/errors';

/** Most streams open at once, in one API process. */
export interface StreamLimits {
  perTenant: number;
  perKey: number;
}

/** How long a refused client is asked to wait before trying again (streams end when their clients leave). */
export const STREAMS_RETRY_AFTER_SECONDS = 5;

export class TooManyStreamsError extends TooManyRequestsError {
  constructor(scope: 'tenant' | 'key', limit: number) {
    super(
      'TOO_MANY_STREAMS',
      `this ${scope === 'tenant' ? 'tenant' : 'API key'} already holds ${limit} open event stream(s), its limit (COVEL_STREAMS_PER_${scope === 'tenant' ? 'TENANT' : 'KEY'}); close one, or retry later`,
      STREAMS_RETRY_AFTER_SECONDS,
    );
  }
}

/**
 * The open streams of each tenant and each API key in this process. `take` counts one in (or
 * answers why not); the release it returns counts it out, once. An entry at zero is removed, so
 * the maps hold only tenants and keys with a stream open.
 */
export class StreamCounts {
  private readonly byTenant = new Map<string, number>();
  private readonly byKey = new Map<string, number>();

  constructor(private readonly limits: StreamLimits) {}

  get size(): { tenants: number; keys: number } {
    return { tenants: this.byTenant.size, keys: this.byKey.size };
  }

  take(tenantId: string, keyId: string): (() => void) | TooManyStreamsError {
    if ((this.byTenant.get(tenantId) ?? 0) >= this.limits.perTenant) return new TooManyStreamsError('tenant', this.limits.perTenant);
    if ((this.byKey.get(keyId) ?? 0) >= this.limits.perKey) return new TooManyStreamsError('key', this.limits.perKey);
    add(this.byTenant, tenantId, 1);
    add(this.byKey, keyId, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      add(this.byTenant, tenantId, -1);
      add(this.byKey, keyId, -1);
    };
  }
}

function add(counts: Map<string, number>, id: string, by: number): void {
  const n = (counts.get(id) ?? 0) + by;
  if (n > 0) counts.set(id, n);
  else counts.delete(id);
}
