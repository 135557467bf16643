#!/usr/bin/env bash
# run-example.sh: builds Portico (release preset) and starts it on examples/basic.
# Today (Foundation issue) the controller loads every plugin, checks the example config's kinds
# and prints them; routing traffic arrives with the controller, sync and data-plane issues.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/portico-ccache}
cmake --preset release >/dev/null
cmake --build --preset release -j"${JOBS:-2}"
bin=build/release
echo "== plugins (read without loading)"
"$bin/controller/ctl/portico-ctl" list-plugins --dir "$bin/plugins-out"
echo "== controller: load plugins, resolve reads order"
"$bin/controller/portico-controller" --plugin-dir "$bin/plugins-out" --config-dir examples/basic --check
