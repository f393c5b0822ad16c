#!/usr/bin/env bash
# Installs gpurent's build and test dependencies: Debian 12 packages, and the dashboard's npm
# packages (web/package-lock.json). Idempotent: when everything is installed it does nothing (no
# apt-get update, no network).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache
  nlohmann-json3-dev libcpp-httplib-dev libsqlite3-dev sqlite3 libpq-dev postgresql-15 libcli11-dev libspdlog-dev
  libyaml-cpp-dev libssl-dev libboost1.81-dev libgtest-dev libgmock-dev libbenchmark-dev prometheus-cpp-dev
  curl ca-certificates wrk jq python3 fio iperf3
  slurm-wlm munge iproute2 util-linux slurmdbd mariadb-server
  podman runc mmdebstrap skopeo openssh-client
  libglpk-dev
  chromium fonts-wqy-microhei
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# The dashboard (web/) builds with Node.js 20 or newer and npm; Debian 12's own nodejs is 18, so
# an existing node is kept and Debian's is installed only when there is none.
if ! command -v node >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The dashboard's npm packages (the versions web/package-lock.json records), when they changed.
# `npm install`, not `npm ci`: npm 11 leaves Vite's Windows-only optional dependency out of the
# lock file and `npm ci` then refuses the lock; `npm install` installs the locked versions.
if [ ! -f web/node_modules/.package-lock.json ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
  echo "install-deps: npm install in web/"
  (cd web && npm install --no-audit --no-fund --loglevel=error)
fi
