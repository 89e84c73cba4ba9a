#!/usr/bin/env bash
# Builds the programs of the local stack from their Go sources, once, and caches them outside
# the repo in ${TOOLTRACE_CACHE_DIR:-~/.cache/tooltrace}/stack, then prints where they are:
#
#   collector=/root/.cache/tooltrace/stack/otelcol-0.161.0-<manifest hash>/otelcol-tooltrace
#   jaeger=/root/.cache/tooltrace/stack/jaeger-v1.75.0/jaeger
#   prometheus=/root/.cache/tooltrace/stack/prometheus-v0.316.0/prometheus
#
# - the Collector: the OpenTelemetry Collector Builder at the release of the manifest
#   (scripts/stack/otelcol-builder.yaml); the cache key is the manifest's hash, so a changed
#   manifest builds a new Collector;
# - Jaeger v2 (github.com/jaegertracing/jaeger/cmd/jaeger; the v2 program is in the module tagged
#   v1.x). `go install pkg@version` refuses it because its go.mod has replace directives, so it is
#   built as a tool of a throwaway module;
# - Prometheus 3 (github.com/prometheus/prometheus/cmd/prometheus, module tag v0.3xx = 3.x).
#
# Progress goes to stderr (a first build takes minutes on 2 cores and a few GB of Go module and
# build cache; later runs print the paths at once). Go missing or a failed build: one line saying
# so, exit 1. A lock keeps two runs (two test files, two terminals) from building the same thing
# at once; each result is moved into place only when complete.
set -euo pipefail

COLLECTOR_VERSION=0.161.0
JAEGER_VERSION=v1.75.0
PROMETHEUS_VERSION=v0.316.0

here="$(cd "$(dirname "$0")" && pwd)"
manifest="$here/otelcol-builder.yaml"
cache="${TOOLTRACE_CACHE_DIR:-${HOME}/.cache/tooltrace}/stack"

say() { echo "stack: $*" >&2; }
fail() {
  say "$*"
  exit 1
}

command -v go >/dev/null 2>&1 ||
  fail "Go is not installed (no 'go' on PATH): the stack builds the Collector, Jaeger and Prometheus from source and needs Go 1.26 or later"
command -v flock >/dev/null 2>&1 || fail "flock (util-linux) is not installed"
mkdir -p "$cache"

hash="$(sha256sum "$manifest" | cut -c1-12)"
collector_dir="$cache/otelcol-${COLLECTOR_VERSION}-${hash}"
jaeger_dir="$cache/jaeger-${JAEGER_VERSION}"
prometheus_dir="$cache/prometheus-${PROMETHEUS_VERSION}"

# Prints "still building" every 30 s while a step runs, so a long first build is visibly alive.
heartbeat_pid=""
start_heartbeat() {
  local what="$1" started="$SECONDS"
  (
    while sleep 30; do
      say "… still building $what ($((SECONDS - started)) s)"
    done
  ) &
  heartbeat_pid=$!
}
stop_heartbeat() {
  if [ -n "$heartbeat_pid" ]; then
    kill "$heartbeat_pid" 2>/dev/null || true
    wait "$heartbeat_pid" 2>/dev/null || true
    heartbeat_pid=""
  fi
}

work=""
cleanup() {
  stop_heartbeat
  if [ -n "$work" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Runs "$@" with its output on stderr, prefixed, and fails with one line naming the step.
step() {
  local what="$1"
  shift
  start_heartbeat "$what"
  if ! "$@" 2>&1 | sed -u 's/^/    /' >&2; then
    stop_heartbeat
    fail "building $what failed (output above)"
  fi
  stop_heartbeat
}

build_collector() {
  local builder_dir="$cache/tools/builder-${COLLECTOR_VERSION}"
  if [ ! -x "$builder_dir/builder" ]; then
    say "installing the OpenTelemetry Collector Builder v${COLLECTOR_VERSION}"
    step "the Collector Builder" env GOBIN="$builder_dir" \
      go install "go.opentelemetry.io/collector/cmd/builder@v${COLLECTOR_VERSION}"
  fi
  say "building the Collector ${COLLECTOR_VERSION} from $manifest (first time: several minutes)"
  local started="$SECONDS"
  # The builder generates a Go module (main.go, components.go, go.mod) and compiles it there.
  step "the Collector" "$builder_dir/builder" --config="$manifest" --output-path="$work/src"
  mkdir -p "$work/out"
  mv "$work/src/otelcol-tooltrace" "$work/out/otelcol-tooltrace"
  rm -rf "$collector_dir"
  mv "$work/out" "$collector_dir"
  say "built the Collector in $((SECONDS - started)) s"
}

build_jaeger() {
  say "building Jaeger ${JAEGER_VERSION} (v2) (first time: a few minutes)"
  local started="$SECONDS"
  mkdir -p "$work/jaeger" "$work/out"
  (
    cd "$work/jaeger"
    go mod init tooltrace.local/stack-jaeger >/dev/null 2>&1
  )
  step "Jaeger" bash -c "cd '$work/jaeger' &&
    go get -tool 'github.com/jaegertracing/jaeger/cmd/jaeger@${JAEGER_VERSION}' &&
    go build -trimpath -o '$work/out/jaeger' github.com/jaegertracing/jaeger/cmd/jaeger"
  rm -rf "$jaeger_dir"
  mv "$work/out" "$jaeger_dir"
  say "built Jaeger in $((SECONDS - started)) s"
}

build_prometheus() {
  say "building Prometheus ${PROMETHEUS_VERSION} (first time: a few minutes)"
  local started="$SECONDS"
  mkdir -p "$work/out"
  step "Prometheus" env GOBIN="$work/out" \
    go install -trimpath "github.com/prometheus/prometheus/cmd/prometheus@${PROMETHEUS_VERSION}"
  rm -rf "$prometheus_dir"
  mv "$work/out" "$prometheus_dir"
  say "built Prometheus in $((SECONDS - started)) s"
}

# One builder at a time; a second run waits here, then finds the binaries built.
exec 9>"$cache/.build.lock"
if ! flock -n 9; then
  say "another build of the stack is running; waiting for it"
  flock 9
fi

for part in collector jaeger prometheus; do
  case "$part" in
    collector) binary="$collector_dir/otelcol-tooltrace" ;;
    jaeger) binary="$jaeger_dir/jaeger" ;;
    prometheus) binary="$prometheus_dir/prometheus" ;;
  esac
  if [ ! -x "$binary" ]; then
    work="$(mktemp -d "$cache/.work-XXXXXX")"
    "build_$part"
    rm -rf "$work"
    work=""
  fi
done

echo "collector=$collector_dir/otelcol-tooltrace"
echo "jaeger=$jaeger_dir/jaeger"
echo "prometheus=$prometheus_dir/prometheus"
