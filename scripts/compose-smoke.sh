#!/usr/bin/env bash
# The compose stack, end to end, on a Docker host: build the tooltrace image, start the stack,
# run the demo agent once, then ask Jaeger (its api_v3) and Tempo (its search API, through
# Grafana's provisioned data source) for the demo's trace and check its shape with
# scripts/compose-smoke/check-trace.ts; then asks Prometheus (through Grafana) for the tool-call
# metrics the dashboard reads. Prints what it found, tears the stack down, and exits non-zero on
# any miss (compose's logs are printed first, to see why).
#
#   npm run smoke:compose            # needs Docker with the compose plugin, and npm ci done
#
# Environment: SMOKE_PROJECT (compose project name, default tooltrace-smoke), SMOKE_TIMEOUT
# (seconds to wait for the trace, and for the metrics, default 120), JAEGER_URL, TEMPO_URL and
# PROMETHEUS_URL (where to ask).
set -euo pipefail
cd "$(dirname "$0")/.."

compose=(docker compose --project-name "${SMOKE_PROJECT:-tooltrace-smoke}")

teardown() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    echo "--- the smoke check failed (exit $status); the stack's recent logs: ---"
    "${compose[@]}" logs --no-color --tail 100 || true
  fi
  echo "Tearing the stack down."
  "${compose[@]}" down --volumes --remove-orphans >/dev/null 2>&1 || true
  exit "$status"
}
trap teardown EXIT

echo "Building the tooltrace image."
"${compose[@]}" build

# The search window starts a little before the demo, in case the clocks differ slightly.
since="$(node -e 'console.log(new Date(Date.now() - 10_000).toISOString())')"

echo "Starting the stack and waiting until it is running (and healthy, where it has a check)."
"${compose[@]}" up --detach --wait --wait-timeout 180 sidecar otel-collector jaeger tempo prometheus grafana

echo "Running the demo agent once."
"${compose[@]}" run --rm demo-agent

node --import tsx scripts/compose-smoke/check-trace.ts \
  --jaeger "${JAEGER_URL:-http://127.0.0.1:16686}" \
  --tempo "${TEMPO_URL:-http://127.0.0.1:3000/api/datasources/proxy/uid/tempo}" \
  --since "$since" \
  --timeout "${SMOKE_TIMEOUT:-120}"

# The metrics path: the sidecar pushes every 10 s through the collector to Prometheus. Ask for
# a series the "Tool calls" dashboard reads, the way Grafana does (its provisioned data source).
prometheus_url="${PROMETHEUS_URL:-http://127.0.0.1:3000/api/datasources/proxy/uid/prometheus}"
metrics_query='sum(gen_ai_execute_tool_duration_seconds_count)'
echo "Asking Prometheus for ${metrics_query}."
deadline=$((SECONDS + ${SMOKE_TIMEOUT:-120}))
until curl -fsS --get "${prometheus_url}/api/v1/query" --data-urlencode "query=${metrics_query}" |
  grep -q '"result":\[{'; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "Prometheus has no ${metrics_query} after ${SMOKE_TIMEOUT:-120} s." >&2
    exit 1
  fi
  sleep 5
done
echo "Prometheus holds the demo's tool-call metrics."
