#!/usr/bin/env bash
# The rooms keep their doors (docs/architecture.md#rooms): fails, naming file and line, when
#  - an engine module (core catalog model sched meter billing advisor insight sim demo market) includes store/,
#    exec/, io/ or server/, or an HTTP library;
#  - a pure engine (catalog model sched meter billing advisor insight demo market) reads a file, the environment
#    or a clock (std::getenv, fstreams, fopen, std::chrono clocks, std::time): the shell (io/,
#    server/, cli/) reads them and passes values in (sim reads trace files by design; core's clock
#    is the injected clock itself);
#  - a service (src/server/services) includes an HTTP library or the API, dashboard, demo or HTTP
#    rooms of the server (outbound calls go through server/http/http_client.h, which hides the
#    library);
#  - the HTTP room (src/server/http) includes the API, dashboard, demo rooms.
# Direct includes only; each room's own headers obey the same rules, so the rule holds through them.
# Tests (*_test.cc) are not rooms: a module's tests may read files through io/.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
check() {  # check DIRS REGEX WHY
  local dirs=$1 re=$2 why=$3 hits
  hits=$(grep -rnE "^#include [<\"]($re)" $dirs --include='*.h' --include='*.cc' | grep -v '_test\.cc:' || true)
  if [ -n "$hits" ]; then
    echo "layering: $why:"
    echo "$hits" | sed 's/^/  /'
    fail=1
  fi
}
engines=""
for m in core catalog model sched meter billing advisor insight sim demo market; do engines="$engines src/$m"; done
check "$engines" 'store/|exec/|io/|server/|httplib|boost/beast' "engines do no I/O: no store, executor, file access, server or HTTP"
pure=""
for m in catalog model sched meter billing advisor insight demo market; do pure="$pure src/$m"; done
hits=$(grep -rnE 'std::getenv|getenv\(|<fstream>|std::[io]?fstream|fopen\(|system_clock|steady_clock|high_resolution_clock|std::time\(' \
  $pure --include='*.h' --include='*.cc' | grep -vE '_test\.cc:|test_util\.h:' || true)
if [ -n "$hits" ]; then
  echo "layering: pure engines read no file, environment or clock:"
  echo "$hits" | sed 's/^/  /'
  fail=1
fi
check src/server/services 'httplib|boost/beast|server/api/|server/dashboard/|server/demo/|server/http/(auth|router|http_server|http_util|rate_limit)' \
  "services never include the HTTP library or the rooms above them"
check src/server/http 'server/api/|server/dashboard/|server/demo/' "the HTTP room does not reach into the API, dashboard or demo"
[ $fail -eq 0 ] && echo "layering: every room keeps its doors"
exit $fail
