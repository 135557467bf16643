#!/usr/bin/env bash
# setup.sh: installs every Debian 12 package Portico's build, tests and benchmarks need.
# Idempotent: packages already present are skipped, so a second run does no network work.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang clang-format
  clang-14 libclang-rt-14-dev  # libFuzzer (scripts/fuzz.sh)
  # libraries (DESIGN.md §9)
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libboost-dev libboost-filesystem-dev libboost-system-dev
  libssl-dev rapidjson-dev libyaml-cpp-dev libtomlplusplus-dev libre2-dev
  libspdlog-dev libfmt-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  # tools used by tests and benchmarks
  curl openssl python3 wrk nginx-light haproxy etcd-server etcd-client binutils valgrind linux-perf
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Debian starts nginx/haproxy/etcd as services on install; tests start their own instances.
for svc in nginx haproxy etcd; do
  if command -v systemctl >/dev/null 2>&1; then $SUDO systemctl disable --now "$svc" >/dev/null 2>&1 || true; fi
  $SUDO service "$svc" stop >/dev/null 2>&1 || true
done
echo "setup: done"
