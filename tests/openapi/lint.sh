#!/usr/bin/env bash
# openapi_lint: docs/openapi.json as the tools that read it see it. Redocly CLI lints it with the
# recommended rules (redocly.yaml: which rule is off, and why): any error or warning fails. Then
# tests/openapi/validate_doc.mjs validates it with swagger-parser and compiles every schema with Ajv.
# Usage: tests/openapi/lint.sh
# Installs nothing. Exits 77 (ctest's SKIP_RETURN_CODE) with a message when node or the npm
# packages (web/node_modules, installed by scripts/install-deps.sh) are missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

skip() { echo "openapi_lint: SKIPPED: $*" >&2; exit 77; }

command -v node >/dev/null 2>&1 || skip "node is not installed (Node.js 20.19 or newer)"
# Redocly CLI 2 runs on Node.js 20.19+ (20.x) or 22.12+.
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \
  || skip "node $(node --version) is too old for Redocly CLI (20.19 or newer needed)"
for pkg in @redocly/cli @apidevtools/swagger-parser ajv ajv-formats; do
  [[ -d "$repo/web/node_modules/$pkg" ]] \
    || skip "web/node_modules/$pkg is missing: run scripts/install-deps.sh (or: cd web && npm install)"
done

cd "$repo"
# Offline and quiet: no usage data, no update check.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
# --max-problems: list them all. Warnings fail too: a clean lint is the bar.
out="$(web/node_modules/.bin/redocly lint --config redocly.yaml --format=stylish --max-problems 1000 docs/openapi.json 2>&1)" \
  && rc=0 || rc=$?
# Drop Redocly's framed notices (for example "Node.js 20 support is ending").
echo "$out" | grep -v '[╔║╚]' | sed '/^[[:space:]]*$/d'
if [[ $rc -ne 0 ]]; then
  echo "openapi_lint: Redocly reports errors (exit $rc)" >&2
  exit 1
fi
if echo "$out" | grep -qE '[0-9]+ warnings?\b|You have [0-9]+ warning'; then
  echo "openapi_lint: Redocly reports warnings; fix them (or turn the rule off in redocly.yaml with the reason)" >&2
  exit 1
fi
exec node "$here/validate_doc.mjs" docs/openapi.json
