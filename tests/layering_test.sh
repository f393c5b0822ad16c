#!/usr/bin/env bash
# The rooms keep their doors (docs/architecture.md#rooms): fails, naming file and line, when
#  - an engine module (core catalog model sched meter billing advisor sim demo) includes store/,
#    exec/ or server/, or an HTTP library;
#  - a service (src/server/services) includes an HTTP library or the API, dashboard, demo or HTTP
#    rooms of the server (outbound calls go through server/http/http_client.h, which hides the
#    library);
#  - the HTTP room (src/server/http) includes the API, dashboard, demo rooms.
# Direct includes only; each room's own headers obey the same rules, so the rule holds through them.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
check() {  # check DIRS REGEX WHY
  local dirs=$1 re=$2 why=$3 hits
  hits=$(grep -rnE "^#include [<\"]($re)" $dirs --include='*.h' --include='*.cc' || true)
  if [ -n "$hits" ]; then
    echo "layering: $why:"
    echo "$hits" | sed 's/^/  /'
    fail=1
  fi
}
engines=""
for m in core catalog model sched meter billing advisor sim demo; do engines="$engines src/$m"; done
check "$engines" 'store/|exec/|server/|httplib|boost/beast' "engines do no I/O: no store, executor, server or HTTP"
check src/server/services 'httplib|boost/beast|server/api/|server/dashboard/|server/demo/|server/http/(auth|router|http_server|http_util|rate_limit)' \
  "services never include the HTTP library or the rooms above them"
check src/server/http 'server/api/|server/dashboard/|server/demo/' "the HTTP room does not reach into the API, dashboard or demo"
[ $fail -eq 0 ] && echo "layering: every room keeps its doors"
exit $fail
