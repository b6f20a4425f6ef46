// The image's HEALTHCHECK (plain Node, no TypeScript loader: it runs every few seconds): exits 0 when
// this container's process answers GET /health/live with 200, else 1. It asks the worker's listener
// (COVEL_METRICS_PORT, set for workers in docker-compose.yml) and the API's port (PORT, default
// 3000); one answer is enough, as a container runs one of them. A worker without COVEL_METRICS_PORT
// has no listener and reports unhealthy.
const ANY = new Set(['0.0.0.0', '::', '']);
const host = process.env.COVEL_HOST ?? '';
const target = ANY.has(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
const ports = [...new Set([process.env.COVEL_METRICS_PORT, process.env.PORT || '3000'].filter(Boolean))];

const live = (port) =>
  fetch(`http://${target}:${port}/health/live`, { signal: AbortSignal.timeout(2000) }).then(
    (res) => res.status === 200,
    () => false,
  );

Promise.all(ports.map(live)).then((answers) => process.exit(answers.includes(true) ? 0 : 1));
