#!/usr/bin/env bash
# run-example.sh: builds Portico (release preset) and starts the controller on examples/basic.
#
# The controller watches a copy of examples/basic, processes it through the plugins and serves
# the admin API on 127.0.0.1:${ADMIN_PORT:-5800}; this script prints the resulting status with
# portico-ctl and keeps the controller running until Ctrl-C. Edit files in the printed config
# directory and watch `portico-ctl get httproutes -A` follow.
# Serving traffic (portico-gateway, `curl` getting a routed answer) comes with the ConfigSync and
# data-plane issues, which extend this same command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/portico-ccache}
cmake --preset release >/dev/null
cmake --build --preset release -j"${JOBS:-2}"
bin=$PWD/build/release
ctl=$bin/controller/ctl/portico-ctl

work=$(mktemp -d /tmp/portico-example.XXXXXX)
cp -r examples/basic "$work/config"
port=${ADMIN_PORT:-5800}
export PORTICO_SERVER=http://127.0.0.1:$port

echo "== plugins (read from their manifests, without loading them)"
"$ctl" list-plugins --dir "$bin/plugins-out"

echo "== starting portico-controller on $work/config (admin $PORTICO_SERVER)"
"$bin/controller/portico-controller" --config-dir "$work/config" --plugin-dir "$bin/plugins-out" \
  --admin-port "$port" &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT INT TERM

deadline=$((SECONDS + 30))
until curl -sf "$PORTICO_SERVER/readyz" >/dev/null; do
  kill -0 $pid 2>/dev/null || { echo "portico-controller exited" >&2; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "portico-controller not ready after 30 s" >&2; exit 1; }
  sleep 0.2
done

echo "== status"
"$ctl" get gatewayclasses
"$ctl" get gateways -A
"$ctl" get httproutes -A
"$ctl" get services -A
echo
echo "portico-controller is running (pid $pid). Try:"
echo "  PORTICO_SERVER=$PORTICO_SERVER $ctl get gateway web -o yaml"
echo "  \$EDITOR $work/config/routes.yaml"
echo "Ctrl-C stops it."
wait $pid
