#!/usr/bin/env bash
# browser_dashboard: runs tests/browser/dashboard_test.mjs (or the test file named second:
# browser_console_containers runs console_containers_test.mjs) against the built dashboard.
# Usage: tests/browser/run.sh /path/to/gpurent [TEST.mjs]
# Installs nothing. Exits 77 (the "skipped" status of ctest's SKIP_RETURN_CODE and automake)
# with a message when a prerequisite is missing: node, Chromium, web/node_modules, web/dist.
# Env: ARTIFACT_DIR (screenshots, default tests/browser/artifacts), CHROMIUM (default /usr/bin/chromium),
# SERVER_START_TIMEOUT_S (how long `serve --demo` may take to listen, default 300),
# DEMO_DAYS (past days the demo replays before listening, passed as --demo-days; default 2).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
chromium="${CHROMIUM:-/usr/bin/chromium}"

skip() { echo "browser test: SKIPPED: $*" >&2; exit 77; }

[[ $# -eq 1 || $# -eq 2 ]] || { echo "usage: $0 /path/to/gpurent [TEST.mjs]" >&2; exit 2; }
binary="$1"
test_file="${2:-dashboard_test.mjs}"
[[ -f "$here/$test_file" ]] || { echo "browser test: no $here/$test_file" >&2; exit 2; }
[[ -x "$binary" ]] || { echo "browser_dashboard: $binary is not an executable gpurent binary" >&2; exit 2; }

command -v node >/dev/null 2>&1 || skip "node is not installed (Node.js 20 or newer)"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \
  || skip "node $(node --version) is too old (20 or newer needed)"
[[ -x "$chromium" ]] || skip "no Chromium at $chromium (Debian: apt-get install chromium; or set CHROMIUM)"
[[ -d "$repo/web/node_modules/playwright-core" ]] \
  || skip "web/node_modules is missing: run scripts/install-deps.sh (or: cd web && npm install)"
[[ -f "$repo/web/dist/index.html" ]] || skip "web/dist is missing: run (cd web && npm run build)"

export CHROMIUM="$chromium"
exec node "$here/$test_file" "$binary"
