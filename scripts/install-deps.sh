#!/usr/bin/env bash
# Installs gpurent's build and test dependencies from Debian 12 packages. Idempotent: when every
# package is already installed it does nothing (no apt-get update, no network).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  nlohmann-json3-dev libcpp-httplib-dev libsqlite3-dev sqlite3 libcli11-dev libspdlog-dev
  libyaml-cpp-dev libssl-dev libgtest-dev libgmock-dev libbenchmark-dev prometheus-cpp-dev
  curl ca-certificates
  slurm-wlm munge iproute2 util-linux slurmdbd mariadb-server
  libglpk-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
