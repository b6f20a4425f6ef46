import { randomBytes } from 'node:crypto';
import { DEFAULT_PROJECTION_IDLE_DELAY_MS } from '../../../events';
import { apiKeyWeakness, ConfigError, configWarnings, estimatedKeyBits, loadConfig, loadEngineLocation } from '../..';

describe('COVEL_BOOTSTRAP_API_KEY strength', () => {
  const rejected = (key: string) => () => loadConfig({ COVEL_BOOTSTRAP_API_KEY: key });

  it.each([
    ['x', /at least 32 characters, not 1/],
    ['cvl_compose_development_key', /at least 32 characters/],
    ['a'.repeat(64), /too little variety/],
    ['ab'.repeat(20), /too little variety/],
    ['0123456789abcdef'.repeat(2), /too little variety/],
    [`${'a'.repeat(24)}bcdefghijk`, /too little variety/],
    ['12345678901234567890123456789012', /too guessable: about 106 bits/],
    ['correct horse battery staple, twice over', /printable ASCII without spaces/],
    ['ключ-ключ-ключ-ключ-ключ-ключ-ключ-ключ', /printable ASCII/],
  ])('%j is refused at start-up with a ConfigError naming the variable', (key, reason) => {
    expect(rejected(key)).toThrow(ConfigError);
    expect(rejected(key)).toThrow(/COVEL_BOOTSTRAP_API_KEY: /);
    expect(rejected(key)).toThrow(reason);
  });

  it('accepts random keys: the integration stack key (39 hex-ish characters), 32 hex, base64url, the engine key format', () => {
    for (let i = 0; i < 200; i++) {
      for (const key of [
        `cvl_it_${randomBytes(16).toString('hex')}`,
        randomBytes(16).toString('hex'),
        randomBytes(24).toString('base64url'),
        `cvl_${randomBytes(32).toString('base64url')}`,
      ]) {
        expect([key, apiKeyWeakness(key)]).toEqual([key, null]);
      }
    }
    expect(loadConfig({ COVEL_BOOTSTRAP_API_KEY: 'cvl_it_0f1e2d3c4b5a69788796a5b4c3d2e1f0' }).bootstrapApiKey).toBe('cvl_it_0f1e2d3c4b5a69788796a5b4c3d2e1f0');
  });

  it('estimates bits as length × log2(character classes used)', () => {
    expect(estimatedKeyBits('a'.repeat(32))).toBeCloseTo(32 * Math.log2(26));
    expect(estimatedKeyBits('aB3_'.repeat(8))).toBeCloseTo(32 * Math.log2(26 + 26 + 10 + 32));
  });

  it('unset or empty means no bootstrap tenant', () => {
    expect(loadConfig({}).bootstrapApiKey).toBeNull();
    expect(loadConfig({ COVEL_BOOTSTRAP_API_KEY: '' }).bootstrapApiKey).toBeNull();
  });
});

describe('COVEL_HOST', () => {
  it('defaults to loopback', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ COVEL_HOST: '' }).host).toBe('127.0.0.1');
  });

  it('takes an address or a host name, and names the variable otherwise', () => {
    expect(loadConfig({ COVEL_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ COVEL_HOST: '::' }).host).toBe('::');
    expect(loadConfig({ COVEL_HOST: 'localhost' }).host).toBe('localhost');
    expect(() => loadConfig({ COVEL_HOST: 'http://0.0.0.0' })).toThrow(/COVEL_HOST: an IP address or a host name/);
  });
});

describe('operations settings: COVEL_METRICS_PORT, COVEL_ADMIN_API_KEY, COVEL_QUEUE_DASHBOARD', () => {
  const adminKey = `cvl_admin_${randomBytes(16).toString('hex')}`;
  const redis = { REDIS_URL: 'redis://127.0.0.1:6379' };

  it('are off by default', () => {
    const config = loadConfig({});
    expect([config.metricsPort, config.adminApiKey, config.queueDashboard]).toEqual([null, null, false]);
    expect(loadConfig({ COVEL_METRICS_PORT: '', COVEL_QUEUE_DASHBOARD: '' }).metricsPort).toBeNull();
  });

  it('COVEL_METRICS_PORT takes a port, and names the variable otherwise', () => {
    expect(loadConfig({ COVEL_METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    for (const bad of ['abc', '0', '65536', '80.5', '-1']) {
      expect(() => loadConfig({ COVEL_METRICS_PORT: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ COVEL_METRICS_PORT: bad })).toThrow(/COVEL_METRICS_PORT: /);
    }
  });

  it('COVEL_ADMIN_API_KEY is checked for strength and must not be the bootstrap tenant key', () => {
    expect(loadConfig({ COVEL_ADMIN_API_KEY: adminKey }).adminApiKey).toBe(adminKey);
    expect(() => loadConfig({ COVEL_ADMIN_API_KEY: 'admin' })).toThrow(/COVEL_ADMIN_API_KEY: .*at least 32 characters/);
    expect(() => loadConfig({ COVEL_ADMIN_API_KEY: adminKey, COVEL_BOOTSTRAP_API_KEY: adminKey })).toThrow(
      /COVEL_ADMIN_API_KEY: must differ from COVEL_BOOTSTRAP_API_KEY/,
    );
  });

  it('COVEL_QUEUE_DASHBOARD=on needs the admin key and BullMQ (REDIS_URL): a start-up error naming the variable otherwise', () => {
    expect(loadConfig({ COVEL_QUEUE_DASHBOARD: 'on', COVEL_ADMIN_API_KEY: adminKey, ...redis }).queueDashboard).toBe(true);
    expect(loadConfig({ COVEL_QUEUE_DASHBOARD: 'off', ...redis }).queueDashboard).toBe(false);
    expect(() => loadConfig({ COVEL_QUEUE_DASHBOARD: 'on', ...redis })).toThrow(/COVEL_QUEUE_DASHBOARD: needs COVEL_ADMIN_API_KEY/);
    expect(() => loadConfig({ COVEL_QUEUE_DASHBOARD: 'on', COVEL_ADMIN_API_KEY: adminKey })).toThrow(/COVEL_QUEUE_DASHBOARD: needs REDIS_URL/);
    expect(() => loadConfig({ COVEL_QUEUE_DASHBOARD: 'yes' })).toThrow(/COVEL_QUEUE_DASHBOARD: on or off/);
  });

  it('COVEL_TURN_DEADLINE_MS is at most 24 h (past 2^31-1 ms a Node timer fires at once): larger is a start-up error naming it', () => {
    expect(loadConfig({ COVEL_TURN_DEADLINE_MS: '86400000' }).worker.turnDeadlineMs).toBe(86_400_000);
    expect(() => loadConfig({ COVEL_TURN_DEADLINE_MS: '86400001' })).toThrow(/COVEL_TURN_DEADLINE_MS: at most 86400000/);
    expect(() => loadConfig({ COVEL_TURN_DEADLINE_MS: '2147483648' })).toThrow(ConfigError);
  });
});

describe('fair scheduling: COVEL_SCHEDULER_WINDOW, COVEL_TENANT_MAX_IN_FLIGHT', () => {
  it('unset: the live workers’ total concurrency and no tenant cap (null); set: whole numbers', () => {
    expect(loadConfig({}).scheduler).toEqual({ window: null, tenantMaxInFlight: null });
    expect(loadConfig({ COVEL_SCHEDULER_WINDOW: '64', COVEL_TENANT_MAX_IN_FLIGHT: '8' }).scheduler).toEqual({ window: 64, tenantMaxInFlight: 8 });
    expect(loadConfig({ COVEL_SCHEDULER_WINDOW: '' }).scheduler.window).toBeNull();
  });

  it.each(['0', '-1', '2.5', 'lots'])('%j is a start-up error naming the variable', (value) => {
    expect(() => loadConfig({ COVEL_SCHEDULER_WINDOW: value })).toThrow(/COVEL_SCHEDULER_WINDOW: /);
    expect(() => loadConfig({ COVEL_TENANT_MAX_IN_FLIGHT: value })).toThrow(/COVEL_TENANT_MAX_IN_FLIGHT: /);
  });
});

describe('the async projector: COVEL_PROJECTION_IDLE_DELAY_MS', () => {
  it('defaults to the projector’s default; takes whole milliseconds from 10 to 10,000, and names the variable otherwise', () => {
    expect(loadConfig({}).projector.idleDelayMs).toBe(DEFAULT_PROJECTION_IDLE_DELAY_MS);
    expect(loadConfig({ COVEL_PROJECTION_IDLE_DELAY_MS: '100' }).projector.idleDelayMs).toBe(100);
    for (const bad of ['0', '5', '10001', '2.5', 'soon']) {
      expect(() => loadConfig({ COVEL_PROJECTION_IDLE_DELAY_MS: bad })).toThrow(/COVEL_PROJECTION_IDLE_DELAY_MS: /);
    }
  });
});

describe('configWarnings', () => {
  const pepper = `cvl_${randomBytes(32).toString('base64url')}`;

  it('warns on PostgreSQL without COVEL_KEY_PEPPER (the pepper would sit beside the hashes), naming no secret', () => {
    const warnings = configWarnings(loadConfig({ DATABASE_URL: 'postgres://covel:secret@127.0.0.1:5432/covel' }));
    expect(warnings).toEqual([expect.stringMatching(/^COVEL_KEY_PEPPER is not set: .* same PostgreSQL database/)]);
    expect(warnings.join('')).not.toContain('secret@');
  });

  it('is quiet with COVEL_KEY_PEPPER set, and on the embedded default', () => {
    expect(configWarnings(loadConfig({ DATABASE_URL: 'postgres://127.0.0.1:5432/covel', COVEL_KEY_PEPPER: pepper }))).toEqual([]);
    expect(configWarnings(loadConfig({}))).toEqual([]);
  });
});

describe('loadEngineLocation: PORT and COVEL_DATA_DIR alone (npm run play)', () => {
  it('gives the port and data directory loadConfig gives, unset or set', () => {
    for (const env of [{}, { PORT: '0', COVEL_DATA_DIR: 'some/dir' }, { PORT: '4100', COVEL_DATA_DIR: '/tmp/données 数据' }]) {
      const config = loadConfig(env);
      expect(loadEngineLocation(env)).toEqual({ port: config.port, dataDir: config.dataDir });
    }
  });

  it('refuses a bad PORT with the ConfigError loadConfig throws', () => {
    for (const port of ['three thousand', '65536', '-1', '80.5']) {
      const thrown = (load: () => unknown) => {
        try {
          load();
        } catch (error) {
          return error;
        }
      };
      const error = thrown(() => loadEngineLocation({ PORT: port }));
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toBe((thrown(() => loadConfig({ PORT: port })) as Error).message);
      expect((error as Error).message).toMatch(/^bad environment: PORT: /);
    }
  });

  it("does not read the engine's other settings", () => {
    const env = { PORT: '4100', COVEL_LOG_LEVEL: 'loud', COVEL_BOOTSTRAP_API_KEY: 'weak', DATABASE_URL: 'not a url' };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(loadEngineLocation(env).port).toBe(4100);
  });
});
