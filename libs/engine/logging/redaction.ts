/** What stands in for a redacted value. */
export const REDACTED = '[redacted]';

const SECRET_KEYS = ['authorization', 'apiKey', 'api_key', 'providerKey', 'tenantKey', 'password', 'secret', 'token', 'cookie', '"x-api-key"'];

/** Text the player or a model wrote (or an error or validation detail quoting it), by the field names the engine uses for it. */
const TEXT_KEYS = ['text', 'input', 'playerText', 'reply', 'content', 'messages', 'prompt', 'body', 'output', 'detail'];

/** pino `redact` paths: each key at the top and up to two levels down (`headers.authorization`, `req.headers.authorization`). */
export function redactPaths(options: { text: boolean }): string[] {
  const keys = options.text ? SECRET_KEYS : [...SECRET_KEYS, ...TEXT_KEYS];
  return keys.flatMap((key) => {
    const at = (prefix: string) => (key.startsWith('"') ? `${prefix}[${key}]` : `${prefix}.${key}`);
    return [key.startsWith('"') ? `[${key}]` : key, at('*'), at('*.*')];
  });
}

/** Names of environment variables whose values are secrets (provider keys, the bootstrap key, URLs with passwords are handled apart). */
const SECRET_ENV = /(?:^|_)(?:API_KEY|KEY|TOKEN|SECRET|PASSWORD|PEPPER)$/;

/**
 * The secret values a deployment's environment holds: provider keys (`OPENAI_API_KEY`, ...),
 * `COVEL_BOOTSTRAP_API_KEY`, any `*_TOKEN`/`*_SECRET`/`*_PASSWORD`, and the passwords of database
 * and Redis URLs. Every line is scrubbed of them whatever logged it (an SDK's error message
 * quoting a key, a URL in a connection error).
 */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (SECRET_ENV.test(name) && value.length >= 6) values.add(value);
    if (/URL$/.test(name)) {
      const password = urlPassword(value);
      if (password && password.length >= 4) values.add(password);
    }
  }
  return [...values];
}

function urlPassword(value: string): string | null {
  try {
    const url = new URL(value);
    return url.password ? decodeURIComponent(url.password) : null;
  } catch {
    return null;
  }
}

/** Replaces every secret in a written line, as it is and JSON-escaped (longest first: one secret may hold another). */
export function secretScrubber(secrets: readonly string[]): (line: string) => string {
  const forms = [...new Set(secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return (line) => line;
  return (line) => {
    let out = line;
    for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  };
}
