#!/usr/bin/env bash
# Prints the path of a Python interpreter whose venv holds the Python MCP peers from PyPI — the
# `mcp` SDK 2.3.x, and FastMCP 4.1.4 with its tasks extension `fastmcp-tasks` 4.1.4 (pinned
# together: fastmcp-tasks pins fastmcp-slim to its own version) — created once in
# ${TOOLTRACE_CACHE_DIR:-~/.cache/tooltrace}/py-mcp-peers and reused offline: the servers
# test-conformance/python-peer.test.ts drives with mcpTools. (`mcp` 2.3 serves MCP 2026-07-28
# with input_required rounds and has no tasks extension; `fastmcp-tasks` serves the extension.)
set -euo pipefail
cache="${TOOLTRACE_CACHE_DIR:-${HOME}/.cache/tooltrace}"
venv="$cache/py-mcp-peers"
python="$venv/bin/python"
if ! "$python" -c 'import mcp.server.mcpserver, fastmcp_tasks' 2>/dev/null; then
  mkdir -p "$cache"
  echo "python-peer.sh: installing mcp 2.3.x, fastmcp and fastmcp-tasks 4.1.4 from PyPI into $venv" >&2
  [ -x "$python" ] || python3 -m venv "$venv"
  "$python" -m pip install --quiet --disable-pip-version-check 'mcp>=2.3,<2.4' \
    'fastmcp==4.1.4' 'fastmcp-tasks==4.1.4' >&2
fi
echo "$python"
