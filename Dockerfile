# One image for the API, the workers and the one-shot migration (docker-compose.yml picks the
# command). Build: `docker build -t covel-engine .` (or `podman build`). Run the API:
#   docker run -e DATABASE_URL=… -e REDIS_URL=… -p 3000:3000 covel-engine
# a worker: … covel-engine node -r ./tools/register.js apps/worker/main.ts (with COVEL_METRICS_PORT)
ARG NODE_IMAGE=node:20-bookworm-slim

# Stage 1: production dependencies only. TypeScript runs from source through @swc-node/register
# (a dependency), so there is no compile step; .npmrc holds engine-strict (npm ci refuses a Node
# the engines field does not allow) and must never hold a registry token (use a build secret).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# Stage 2: the sources (.dockerignore leaves out tests, benchmarks and CI files), with the SWC
# transform cache warmed for the API, the worker and the emulator: a container starts without
# compiling them again.
FROM ${NODE_IMAGE} AS app
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
ENV SWC_NODE_CACHE_DIR=/app/.swc-cache
RUN node -r ./tools/register.js -e "require('./apps/api/create-api-app'); require('./apps/worker/create-worker-app'); require('./libs/emulator'); require('@nestjs/platform-express/multer/interceptors/file.interceptor')"

# Stage 3: the runtime. tini (Debian's) is PID 1: it forwards SIGTERM/SIGINT to node and reaps
# zombies. The code is root's and read-only; the user `node` (uid 1000) writes only the data
# directory (the embedded default's PGlite and dev key; unused with DATABASE_URL).
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=app /app ./
RUN mkdir -p /app/.covel && chown node:node /app/.covel
ENV NODE_ENV=production \
    SWC_NODE_CACHE_DIR=/app/.swc-cache \
    COVEL_DATA_DIR=/app/.covel \
    COVEL_HOST=0.0.0.0 \
    PORT=3000
USER node
EXPOSE 3000
# GET /health/live on the API's PORT, or on a worker's COVEL_METRICS_PORT (tools/healthcheck.js)
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "tools/healthcheck.js"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "-r", "./tools/register.js", "apps/api/main.ts"]
