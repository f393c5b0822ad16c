#!/usr/bin/env bash
# openapi_live_responses: runs tests/openapi/live_test.mjs (every GET of docs/openapi.json against
# a fresh `gpurent serve --demo`, answers validated with Ajv; then /metrics) with the given binary.
# Usage: tests/openapi/run.sh /path/to/gpurent
# Installs nothing. Exits 77 (ctest's SKIP_RETURN_CODE) with a message when node or the npm
# packages (web/node_modules, installed by scripts/install-deps.sh) are missing.
# Env: SERVER_START_TIMEOUT_S, DEMO_DAYS, VERBOSE (see live_test.mjs).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

skip() { echo "openapi_live_responses: SKIPPED: $*" >&2; exit 77; }

[[ $# -eq 1 ]] || { echo "usage: $0 /path/to/gpurent" >&2; exit 2; }
binary="$1"
[[ -x "$binary" ]] || { echo "openapi_live_responses: $binary is not an executable gpurent binary" >&2; exit 2; }

command -v node >/dev/null 2>&1 || skip "node is not installed (Node.js 20 or newer)"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \
  || skip "node $(node --version) is too old (20 or newer needed)"
for pkg in ajv ajv-formats; do
  [[ -d "$repo/web/node_modules/$pkg" ]] \
    || skip "web/node_modules/$pkg is missing: run scripts/install-deps.sh (or: cd web && npm install)"
done

exec node "$here/live_test.mjs" "$binary"
