import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { endpointFor, type Protocol } from '../libs/providers';

/** The address the HTTP server is bound to, as `host:port` (`[::]:3000` for IPv6). */
export function boundAddress(app: INestApplication): string {
  const address = (app.getHttpServer() as { address(): AddressInfo | string | null }).address();
  if (!address || typeof address === 'string') return String(address);
  return address.family === 'IPv6' ? `[${address.address}]:${address.port}` : `${address.address}:${address.port}`;
}

export interface ModelSlotFacts {
  name: string;
  protocol: Protocol;
}

/**
 * Where model calls go, for the start-up banner: the real endpoint only where a provider key is
 * set; otherwise this process's own offline emulator, or the shared one at COVEL_EMULATOR_URL.
 */
export function describeModels(slots: readonly ModelSlotFacts[], env: NodeJS.ProcessEnv, ownEmulatorUrl: string | null): string {
  const describe = (protocol: Protocol) => {
    const endpoint = endpointFor(protocol, env, ownEmulatorUrl);
    if (endpoint.kind === 'real') return `real ${protocol} endpoint${endpoint.baseURL ? ` (${endpoint.baseURL})` : ''}`;
    return env.COVEL_EMULATOR_URL ? `shared provider emulator (${env.COVEL_EMULATOR_URL})` : `offline provider emulator (${ownEmulatorUrl})`;
  };
  const described = slots.map((s) => ({ name: s.name, where: describe(s.protocol) }));
  const distinct = new Set(described.map((d) => d.where));
  return distinct.size === 1 ? [...distinct][0] : described.map((d) => `${d.name}: ${d.where}`).join('; ');
}
