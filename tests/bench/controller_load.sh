#!/usr/bin/env bash
# controller_load.sh: "10,000 HTTPRoutes load and the controller is ready in under 10 s; editing
# one route reprocesses only that route" (issue 3, Show). Not a CTest test: run it by hand on a
# Release (or dev) build.
#
#   tests/bench/controller_load.sh [--build DIR] [--routes N] [--per-file K] [--isolate-all]
#                                  [--isolate-plugin NAME] [--edits E] [--keep]
#
# Generates 1 GatewayClass + 1 Gateway + N Services + N HTTPRoutes (K routes per file, default
# 1: one file per route) into a temporary directory, starts portico-controller on it (admin port
# 0), times start -> /readyz 200, then rewrites one route's file (atomic rename) and reports the
# delta of portico_controller_processed_total{kind="HTTPRoute"} once the controller is idle again
# (must be 1). Exit status 1 when ready took 10 s or more or the delta is not 1.
# --isolate-all runs every processor in a forked child ([plugins] isolate_all): the difference in
# time to ready, divided by the objects processed, is what isolation costs per call (the
# 10 s limit is then not checked: isolation is not meant for 20,000 objects at start-up).
# --edits E then rewrites a ConfigMap (which nothing reads) E times, each once the last is
# visible, and reports the controller's CPU and its children's per edit: with
# --isolate-plugin configmap, each edit is one isolated call in a controller holding every object.
set -euo pipefail
cd "$(dirname "$0")/../.."

BUILD=build/dev
ROUTES=10000
PER_FILE=1
KEEP=0
ISOLATE=()
READY_TIMEOUT_S=120
EDITS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --routes) ROUTES=$2; shift 2 ;;
    --per-file) PER_FILE=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --isolate-all) ISOLATE=(--isolate-all-plugins true); READY_TIMEOUT_S=1200; shift ;;
    --isolate-plugin) ISOLATE+=(--isolate-plugin "$2"); shift 2 ;;
    --edits) EDITS=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
CONTROLLER=$BUILD/controller/portico-controller
PLUGINS=$BUILD/plugins-out
[ -x "$CONTROLLER" ] || { echo "no $CONTROLLER: build it first (cmake --build $BUILD)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/portico-load-XXXXXX)
PID=
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  if [ "$KEEP" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
mkdir -p "$WORK/conf"

python3 - "$WORK/conf" "$ROUTES" "$PER_FILE" <<'EOF'
import os, sys
conf, routes, per_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(os.path.join(conf, "gateway.yaml"), "w") as f:
    f.write("""apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portico}
spec: {controllerName: portico.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: portico
  listeners:
  - {name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}
""")
def route(i):
    return """apiVersion: v1
kind: Service
metadata: {name: svc-%(i)05d, namespace: default}
spec:
  ports: [{port: 80, targetPort: 3000}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route-%(i)05d, namespace: default}
spec:
  parentRefs: [{name: web}]
  hostnames: [host-%(i)05d.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /r%(i)05d}}]
    backendRefs: [{name: svc-%(i)05d, port: 80}]
""" % {"i": i}
with open(os.path.join(conf, "bench-cm.yaml"), "w") as f:
    f.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bench-cm, namespace: default}\n"
            "data: {edit: \"0\"}\n")
os.makedirs(os.path.join(conf, "routes"), exist_ok=True)
for start in range(0, routes, per_file):
    docs = [route(i) for i in range(start, min(routes, start + per_file))]
    with open(os.path.join(conf, "routes", "route-%05d.yaml" % start), "w") as f:
        f.write("---\n".join(docs))
EOF
FILES=$(find "$WORK/conf" -name '*.yaml' | wc -l)
echo "generated: 1 Gateway, $ROUTES HTTPRoutes, $ROUTES Services in $FILES files ($WORK/conf)"

start_ns=$(date +%s%N)
"$CONTROLLER" --config-dir "$WORK/conf" --plugin-dir "$PLUGINS" --admin-port 0 \
  --admin-port-file "$WORK/admin.port" --log-level info "${ISOLATE[@]}" > "$WORK/controller.log" 2>&1 &
PID=$!

# wait_for DEADLINE_S COMMAND...: polls COMMAND every 20 ms until it succeeds or the deadline.
wait_for() {
  local deadline=$(( $(date +%s%N) + $1 * 1000000000 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s%N)" -lt "$deadline" ] || return 1
    kill -0 "$PID" 2>/dev/null || { echo "controller exited:" >&2; tail -5 "$WORK/controller.log" >&2; exit 1; }
    sleep 0.02
  done
}
wait_for 30 test -s "$WORK/admin.port"
PORT=$(cat "$WORK/admin.port")
ADMIN=http://127.0.0.1:$PORT
wait_for "$READY_TIMEOUT_S" curl -sf "$ADMIN/readyz"
ready_ns=$(date +%s%N)
ready_ms=$(( (ready_ns - start_ns) / 1000000 ))
# CPU at ready (ms): the controller's own, and its reaped children's (isolated calls), which
# unlike wall time do not depend on how busy the machine is.
cpu() {  # cpu: "<controller ms> <reaped children ms>"
  awk -v hz="$(getconf CLK_TCK)" \
    '{ printf "%d %d\n", ($14 + $15) * 1000 / hz, ($16 + $17) * 1000 / hz }' "/proc/$PID/stat"
}
read -r cpu_self cpu_children < <(cpu)

processed() {  # processed KIND: portico_controller_processed_total{kind="KIND",...}
  curl -sf "$ADMIN/metrics" | awk -v k="kind=\"$1\"" 'index($0, "portico_controller_processed_total{" k) == 1 { print $2 }'
}
objects=$(curl -sf "$ADMIN/api/v1/info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["objectsTotal"])')
before=$(processed HTTPRoute)
attached=$(curl -sf "$ADMIN/api/v1/objects/gateways/default/web" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["listeners"][0]["attachedRoutes"])')

# Edit one route: a new path prefix, written atomically like an editor would.
EDIT="$WORK/conf/routes/route-00000.yaml"
sed 's|value: /r00000|value: /edited|' "$EDIT" > "$EDIT.tmp~" && mv "$EDIT.tmp~" "$EDIT"
edit_ns=$(date +%s%N)
route_edited() {
  curl -sf "$ADMIN/api/v1/objects/httproutes/default/route-00000" | grep -q '"/edited"'
}
wait_for 30 route_edited
seen_ms=$(( ($(date +%s%N) - edit_ns) / 1000000 ))
# Idle again: the queue is empty and the count stays put for 500 ms.
settled() {
  local a b
  a=$(processed HTTPRoute); sleep 0.5; b=$(processed HTTPRoute)
  [ "$a" = "$b" ] && curl -sf "$ADMIN/metrics" | grep -q '^portico_controller_queue_depth 0$'
}
wait_for 30 settled
after=$(processed HTTPRoute)
delta=$(( after - before ))

if [ "$EDITS" -gt 0 ]; then
  read -r edits_self0 edits_children0 < <(cpu)
  edits_start=$(date +%s%N)
  for e in $(seq 1 "$EDITS"); do
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bench-cm, namespace: default}\ndata: {edit: "%s"}\n' "$e" \
      > "$WORK/conf/bench-cm.yaml.tmp~" && mv "$WORK/conf/bench-cm.yaml.tmp~" "$WORK/conf/bench-cm.yaml"
    cm_edited() { curl -sf "$ADMIN/api/v1/objects/configmaps/default/bench-cm" | grep -q "\"edit\":\"$e\""; }
    wait_for 30 cm_edited
  done
  edits_ms=$(( ($(date +%s%N) - edits_start) / 1000000 ))
  read -r edits_self1 edits_children1 < <(cpu)
  echo "ConfigMap edits:        $EDITS in ${edits_ms} ms; CPU per edit:" \
    "$(( (edits_self1 - edits_self0) * 1000 / EDITS )) us controller," \
    "$(( (edits_children1 - edits_children0) * 1000 / EDITS )) us children"
fi

echo "objects:                $objects"
echo "ready after start:      ${ready_ms} ms (limit 10000 ms)"
echo "CPU at ready:           ${cpu_self} ms controller, ${cpu_children} ms its children"
echo "Gateway attachedRoutes: $attached"
echo "edit visible after:     ${seen_ms} ms"
echo "controller RSS:         $(awk '/^VmRSS/ {print $2 " " $3}' /proc/$PID/status)"
curl -sf "$ADMIN/metrics" | grep -E '^portico_controller_isolated_(runs|failures)_total' || true
echo "HTTPRoutes processed:   $before at ready, $after after the edit: delta $delta (want 1)"
grep -E "initial batch .* processed in" "$WORK/controller.log" | sed 's/^/controller log: /' || true

status=0
if [ ${#ISOLATE[@]} -eq 0 ]; then
  [ "$ready_ms" -lt 10000 ] || { echo "FAIL: not ready within 10 s"; status=1; }
fi
[ "$delta" -eq 1 ] || { echo "FAIL: the edit reprocessed $delta HTTPRoutes, want 1"; status=1; }
[ "$status" = 0 ] && echo "PASS"
exit $status
