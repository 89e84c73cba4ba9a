#!/usr/bin/env bash
# `npm run test:conformance`: the official MCP conformance suite against tooltrace's MCP adapter
# (test-conformance/), run by Node 24 (scripts/node-binary.sh). The suite needs Node 22 or later,
# so it is no devDependency (npm ci on Node 20 would warn about its engines): it is installed at
# the pinned version into ${TOOLTRACE_CACHE_DIR:-~/.cache/tooltrace} once, and reused offline.
# Extra arguments go to Vitest (`--reporter=json --outputFile.json=…`).
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.1.16
node24="$(bash scripts/node-binary.sh 24)"
export PATH="$(dirname "$node24"):$PATH"
cache="${TOOLTRACE_CACHE_DIR:-${HOME}/.cache/tooltrace}"
target="$cache/mcp-conformance-${version}"
cli="$target/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$cli" ]; then
  mkdir -p "$cache"
  work="$(mktemp -d "$cache/.mcp-conformance.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  echo "conformance.sh: installing @modelcontextprotocol/conformance@${version} into $target" >&2
  echo '{"private":true}' >"$work/package.json"
  (cd "$work" && npm install --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@${version}" >&2)
  rm -rf "$target"
  mv "$work" "$target"
fi
MCP_CONFORMANCE_CLI="$cli" "$node24" node_modules/vitest/vitest.mjs run \
  --config vitest.conformance.config.ts "$@"
