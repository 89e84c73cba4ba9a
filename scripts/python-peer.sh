#!/usr/bin/env bash
# Prints the path of a Python interpreter whose venv holds the Python MCP SDK (`mcp` 2.3.x, from
# PyPI), created once in ${TOOLTRACE_CACHE_DIR:-~/.cache/tooltrace}/py-mcp-peers and reused
# offline: the peer test-conformance/python-peer.test.ts drives with mcpTools. (`mcp` 2.3 serves
# MCP 2026-07-28 with input_required rounds; it has no tasks extension. `fastmcp` 4.1 builds on it.)
set -euo pipefail
cache="${TOOLTRACE_CACHE_DIR:-${HOME}/.cache/tooltrace}"
venv="$cache/py-mcp-peers"
python="$venv/bin/python"
if ! "$python" -c 'import mcp.server.mcpserver' 2>/dev/null; then
  mkdir -p "$cache"
  echo "python-peer.sh: installing mcp 2.3.x from PyPI into $venv" >&2
  python3 -m venv "$venv"
  "$python" -m pip install --quiet --disable-pip-version-check 'mcp>=2.3,<2.4' >&2
fi
echo "$python"
