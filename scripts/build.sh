#!/usr/bin/env bash
# Configures and builds gpurent into build/ (Release: -O2 without debug info, Ninja, 2 jobs by
# default; BUILD_TYPE=RelWithDebInfo adds debug info),
# and the dashboard into web/dist (TypeScript checked, bundled by Vite; served by
# `gpurent serve --static-dir web/dist`).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-2}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
(cd web && npm run build --silent >/dev/null)
echo "build: gpurent in $BUILD_DIR/, dashboard in web/dist/"
