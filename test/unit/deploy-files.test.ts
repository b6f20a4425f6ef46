import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROVIDER_ENV } from '../../libs/providers';

/**
 * docker-compose.yml and the Dockerfile as an operator relies on them (the image cannot be built on
 * the CI machine: no container registry; see the Dockerfile's header for building it).
 */
const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  restart?: string;
  expose?: string[];
  healthcheck?: { disable?: boolean };
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
const ENGINE_SERVICES = ['migrate', 'api', 'worker'];

describe('docker-compose.yml', () => {
  it.each(ENGINE_SERVICES)("%s gets every provider's key and base URL variable", (name) => {
    const env = compose.services[name].environment ?? {};
    for (const { key, url } of Object.values(PROVIDER_ENV)) {
      expect(env).toHaveProperty([key], `\${${key}:-}`);
      expect(env).toHaveProperty([url], `\${${url}:-}`);
    }
  });

  it.each(ENGINE_SERVICES)('%s runs node directly on a file of the image (not npm)', (name) => {
    const command = compose.services[name].command ?? [];
    expect(command.slice(0, 3)).toEqual(['node', '-r', './tools/register.js']);
    expect(command).toHaveLength(4);
    expect(existsSync(join(root, command[3]))).toBe(true);
  });

  it('the API and the workers restart unless stopped; the one-shot migration never restarts', () => {
    expect(compose.services.api.restart).toBe('unless-stopped');
    expect(compose.services.worker.restart).toBe('unless-stopped');
    expect(compose.services.migrate.restart).toBe('no');
    expect(compose.services.migrate.healthcheck).toEqual({ disable: true });
  });

  it("each worker serves /metrics and /health/live on COVEL_METRICS_PORT, on the compose network (the image's healthcheck asks it)", () => {
    const worker = compose.services.worker;
    const port = worker.environment?.COVEL_METRICS_PORT ?? '';
    expect(port).toMatch(/^\d+$/);
    expect(worker.expose).toEqual([port]);
    expect(worker.environment?.COVEL_HOST).toBe('0.0.0.0');
    expect(compose.services.api.environment).not.toHaveProperty('COVEL_METRICS_PORT');
  });
});

/** The Dockerfile's instructions per stage (continuation lines joined). */
function stages(text: string): { from: string; instructions: { op: string; args: string }[] }[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const out: { from: string; instructions: { op: string; args: string }[] }[] = [];
  for (const line of lines) {
    const [op, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (op === 'FROM') out.push({ from: args, instructions: [] });
    else if (out.length) out[out.length - 1].instructions.push({ op, args });
  }
  return out;
}

describe('Dockerfile', () => {
  const all = stages(read('Dockerfile'));
  const runtime = all[all.length - 1];
  const last = (op: string) => runtime.instructions.filter((i) => i.op === op).pop()?.args ?? '';

  it('is multi-stage: dependencies are installed by npm ci --omit=dev, never with the devDependencies', () => {
    expect(all.length).toBeGreaterThan(1);
    const installs = all.flatMap((s) => s.instructions).filter((i) => i.op === 'RUN' && /\bnpm (ci|install|i)\b/.test(i.args));
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) expect(install.args).toMatch(/\bnpm ci --omit=dev\b/);
  });

  it('the runtime runs node directly under tini, as a user other than root, with a HEALTHCHECK on /health/live', () => {
    expect(JSON.parse(last('ENTRYPOINT'))).toEqual(['/usr/bin/tini', '--']);
    expect(runtime.instructions.some((i) => i.op === 'RUN' && /apt-get install .*\btini\b/.test(i.args))).toBe(true);
    expect(JSON.parse(last('CMD'))).toEqual(['node', '-r', './tools/register.js', 'apps/api/main.ts']);
    expect(last('USER')).toMatch(/^(?!root$|0$)\S+$/);
    expect(last('HEALTHCHECK')).toMatch(/CMD \["node", "tools\/healthcheck\.js"\]$/);
    expect(read('tools/healthcheck.js')).toContain('/health/live');
  });

  it('.dockerignore leaves out what production never loads (the lint boundary) and the host node_modules', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'test', '**/test', '**/*.test.ts', 'bench', '.git']));
    for (const kept of ['libs', 'libs/emulator', 'tools', 'tsconfig.json', '.npmrc']) expect(ignored).not.toContain(kept);
  });
});
