# tooltrace container image: the `tooltrace` command line, run by default as the sidecar that
# receives an agent's bus events (POST /v1/events) and exports them as OTLP spans.
#
#   docker build -t tooltrace:local .
#   docker run --rm -p 127.0.0.1:4319:4319 -e TOOLTRACE_TOKEN=change-me \
#     -e OTEL_EXPORTER_OTLP_ENDPOINT=http://my-collector:4318 tooltrace:local
#
# docker-compose.yml builds it for the `sidecar` and `demo-agent` services.

# One exact Node 20 release (the line the project supports), shared by both stages so the code is
# compiled and run on the same runtime. Bump deliberately, never `latest`.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# ---- build: all dependencies, TypeScript -> dist/ ---------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Manifests first, so the dependency layer is reused until they change. --ignore-scripts: the
# package's `prepare` script runs the build, and the sources are not copied yet.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund

# tsconfig.build.json (rootDir src, outDir dist) extends tsconfig.json: src/cli.ts -> dist/cli.js,
# which scripts/bundle-cli.ts then replaces with the bundled command (chunks in dist/cli-chunks).
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle-cli.ts ./scripts/
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies and the compiled output only --------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app

# --omit=dev leaves out the compiler, linters and test tools. --ignore-scripts: `prepare` would
# call tsc, which is not installed here, and no production dependency needs its install script
# (test/deploy checks the lockfile for that).
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

COPY --from=build /app/dist ./dist
COPY LICENSE ./

# `tooltrace` on PATH, as a global install would link the package's bin (dist/cli.js starts with
# a `#!/usr/bin/env node` line).
RUN chmod 0755 /app/dist/cli.js && ln -s /app/dist/cli.js /usr/local/bin/tooltrace

# The files stay owned by root, read-only to the process, which runs as the unprivileged `node`
# user of the base image. Mount a volume for --checkpoint or --file paths that must be written.
USER node

EXPOSE 4319

# Slim images have no curl or wget; Node's own fetch does the probe. It asks the sidecar's
# /healthz on the port of the default CMD; set TOOLTRACE_HEALTHCHECK_URL when it listens
# elsewhere (or disable the check for one-shot commands such as `sidecar --stdin` or `demo`).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.TOOLTRACE_HEALTHCHECK_URL || 'http://127.0.0.1:4319/healthz', { signal: AbortSignal.timeout(2500) }).then((response) => process.exit(response.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["tooltrace"]
CMD ["sidecar", "--listen", "0.0.0.0:4319"]
