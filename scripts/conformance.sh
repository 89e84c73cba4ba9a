#!/usr/bin/env bash
# `npm run test:conformance`: the official MCP conformance suite against tooltrace's MCP adapter
# (test-conformance/), run by Node 24 (scripts/node-binary.sh). The suite needs Node 22 or later,
# so it is no devDependency (npm ci on Node 20 would warn about its engines): it is installed at
# the pinned versions (0.1.16 for MCP 2025, 0.2.0-alpha.12 for 2026-07-28) into
# ${TOOLTRACE_CACHE_DIR:-~/.cache/tooltrace} once, and reused offline.
# Extra arguments go to Vitest (`--reporter=json --outputFile.json=…`).
set -euo pipefail
cd "$(dirname "$0")/.."
node24="$(bash scripts/node-binary.sh 24)"
export PATH="$(dirname "$node24"):$PATH"
cache="${TOOLTRACE_CACHE_DIR:-${HOME}/.cache/tooltrace}"

# Installs @modelcontextprotocol/conformance@$1 into the cache once; prints its command's path.
install_suite() {
  local version="$1"
  local target="$cache/mcp-conformance-${version}"
  local cli="$target/node_modules/@modelcontextprotocol/conformance/dist/index.js"
  if [ ! -f "$cli" ]; then
    mkdir -p "$cache"
    local work
    work="$(mktemp -d "$cache/.mcp-conformance.XXXXXX")"
    echo "conformance.sh: installing @modelcontextprotocol/conformance@${version} into $target" >&2
    echo '{"private":true}' >"$work/package.json"
    if ! (cd "$work" && npm install --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/conformance@${version}" >&2); then
      rm -rf "$work"
      return 1
    fi
    rm -rf "$target"
    mv "$work" "$target"
  fi
  echo "$cli"
}

# 0.1.16 (`latest`) covers MCP 2025; the 0.2.0 prerelease (no dist-tag: pinned) covers 2026-07-28.
cli_2025="$(install_suite 0.1.16)"
cli_2026="$(install_suite 0.2.0-alpha.12)"
# A server written by someone else: the Python MCP SDK from PyPI, in a venv in the cache.
python_peer="$(bash scripts/python-peer.sh)"
MCP_CONFORMANCE_CLI="$cli_2025" MCP_CONFORMANCE_CLI_2026="$cli_2026" MCP_PYTHON_PEER="$python_peer" \
  "$node24" \
  node_modules/vitest/vitest.mjs run --config vitest.conformance.config.ts "$@"
