#!/usr/bin/env bash
# run-example.sh: builds Portico (release preset) and runs it on examples/basic: the controller
# (admin 127.0.0.1:${ADMIN_PORT:-5800}, ConfigSync 127.0.0.1:${SYNC_PORT:-5810}), a gateway
# serving the example Gateway (admin 127.0.0.1:${GATEWAY_ADMIN_PORT:-5900}, traffic on :8080) and
# the two echo backends the example routes to (127.0.0.1:9001 and :9002). It prints the status,
# curls the two routes through the gateway and keeps everything running until Ctrl-C. Edit files
# in the printed config directory and watch the routes follow.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/portico-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
cmake --preset release >/dev/null
# Only the binaries and the plugins the example runs, not the test targets.
cmake --build --preset release -j"${JOBS:-2}" --target portico_binaries
bin=$PWD/build/release
ctl=$bin/controller/ctl/portico-ctl

work=$(mktemp -d /tmp/portico-example.XXXXXX)
cp -r examples/basic "$work/config"
port=${ADMIN_PORT:-5800}
sync_port=${SYNC_PORT:-5810}
gw_port=${GATEWAY_ADMIN_PORT:-5900}
export PORTICO_SERVER=http://127.0.0.1:$port
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

wait_for() {  # wait_for URL WHAT
  local deadline=$((SECONDS + 30))
  until curl -sf "$1" >/dev/null; do
    [ $SECONDS -lt $deadline ] || { echo "$2 not ready after 30 s" >&2; exit 1; }
    sleep 0.2
  done
}

echo "== plugins (read from their manifests, without loading them)"
"$ctl" list-plugins --dir "$bin/plugins-out"

echo "== echo backends on 127.0.0.1:9001 and 127.0.0.1:9002"
python3 tests/conformance/echo_backend.py --backend 127.0.0.1:9001=default/echo-v1 \
  --backend 127.0.0.1:9002=default/echo-v2 &
pids+=($!)

echo "== portico-controller on $work/config (admin $PORTICO_SERVER, ConfigSync :$sync_port)"
"$bin/controller/portico-controller" --config-dir "$work/config" --plugin-dir "$bin/plugins-out" \
  --admin-port "$port" --sync-port "$sync_port" &
pids+=($!)
wait_for "$PORTICO_SERVER/readyz" portico-controller

echo "== portico-gateway serving default/web (admin 127.0.0.1:$gw_port)"
"$bin/gateway/portico-gateway" --controller "127.0.0.1:$sync_port" --gateway default/web \
  --plugin-dir "$bin/plugins-out" --admin-port "$gw_port" \
  --snapshot-path "$work/gateway.snapshot" &
pids+=($!)
wait_for "http://127.0.0.1:$gw_port/readyz" portico-gateway

echo "== status"
"$ctl" get gateways -A
"$ctl" get httproutes -A
"$ctl" status

echo "== traffic through the gateway"
deadline=$((SECONDS + 30))
until curl -sf -o /dev/null http://127.0.0.1:8080/v1; do
  [ $SECONDS -lt $deadline ] || { echo "the gateway does not route /v1 after 30 s" >&2; exit 1; }
  sleep 0.2
done
echo "\$ curl http://127.0.0.1:8080/v1/hello"
curl -s http://127.0.0.1:8080/v1/hello; echo
echo "\$ curl http://127.0.0.1:8080/v2/hello"
curl -s http://127.0.0.1:8080/v2/hello; echo
echo
echo "Running. Try:"
echo "  curl -i http://127.0.0.1:8080/v1/x"
echo "  PORTICO_SERVER=$PORTICO_SERVER $ctl get gateway web -o yaml"
echo "  \$EDITOR $work/config/routes.yaml"
echo "Ctrl-C stops everything."
wait
