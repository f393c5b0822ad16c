#!/usr/bin/env bash
# docs_user_guides: the commands of docs/user-guide.md and docs/user-guide.zh-CN.md, run against a
# demo server. Each guide's blocks marked `<!-- doctest -->` are extracted by guide_doctest.py (the
# convention is at the top of that file) and run in order in one bash shell, from the repository
# root, with GPURENT_SERVER and the operator's GPURENT_TOKEN set, against a fresh
# `gpurent serve --demo --demo-days 2` (one per guide, so each starts from the same world). A command
# fails the test when its exit code is not the one the guide states (0 unless `# exit N`) or its
# first output line differs from the guide's. Both guides must hold the same commands.
# Usage: tests/docs/run.sh /path/to/gpurent [GUIDE…]   (default: both guides)
# Installs nothing. Exits 77 (ctest's SKIP_RETURN_CODE) with a message when the binary, python3 or
# jq (some guide commands use it) is missing.
# Env: SERVER_START_TIMEOUT_S (how long `serve --demo` may take to listen, default 300),
# DEMO_DAYS (default 2), KEEP_WORKDIR=1 (keep the work folders: commands, outputs, server logs).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

skip() { echo "docs_user_guides: SKIPPED: $*" >&2; exit 77; }

[[ $# -ge 1 ]] || { echo "usage: $0 /path/to/gpurent [GUIDE...]" >&2; exit 2; }
binary="$1"
shift
[[ -e "$binary" ]] || skip "no gpurent binary at $binary (build it first: ninja -C build gpurent)"
[[ -x "$binary" ]] || { echo "docs_user_guides: $binary is not executable" >&2; exit 2; }
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
command -v jq >/dev/null 2>&1 || skip "jq is not installed (the guides' commands use it; Debian: apt-get install jq)"

guides=("$@")
[[ ${#guides[@]} -gt 0 ]] || guides=("$repo/docs/user-guide.md" "$repo/docs/user-guide.zh-CN.md")

status=0
# Same commands in both languages (checked first: it needs no server).
if [[ $# -eq 0 ]]; then
  python3 "$here/guide_doctest.py" parity "${guides[@]}" || status=1
fi

top="$(mktemp -d "${TMPDIR:-/tmp}/gpurent-doctest.XXXXXX")"
server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
cleanup() {
  stop_server
  if [[ "${KEEP_WORKDIR:-0}" == 1 ]]; then echo "docs_user_guides: work folders kept in $top" >&2; else rm -rf "$top"; fi
}
trap cleanup EXIT

# The `gpurent` the guides name is the binary under test.
mkdir -p "$top/bin"
ln -s "$binary" "$top/bin/gpurent"

start_server() {  # $1: work folder; sets server_pid and url
  local dir="$1" timeout="${SERVER_START_TIMEOUT_S:-300}" waited=0
  "$binary" serve --demo --demo-days "${DEMO_DAYS:-2}" --db "$dir/demo.db" --port 0 \
    >"$dir/serve.out" 2>"$dir/serve.err" </dev/null &
  server_pid=$!
  until [[ -s "$dir/serve.out" ]] && head -1 "$dir/serve.out" | grep -q '"event":"listening"'; do
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "docs_user_guides: the demo server exited before listening; its stderr:" >&2
      tail -20 "$dir/serve.err" >&2
      exit 1
    fi
    if (( waited >= timeout * 10 )); then
      echo "docs_user_guides: the demo server did not listen within ${timeout} s" >&2
      exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  url="$(head -1 "$dir/serve.out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["url"])')"
  # Each demo user's token in <user>.token, as guide section 2.4 saves them.
  python3 - "$dir/demo.db.demo-tokens.json" "$dir" <<'PY'
import json, os, sys
for entry in json.load(open(sys.argv[1], encoding="utf-8")):
    path = os.path.join(sys.argv[2], entry["user"] + ".token")
    with open(path, "w", encoding="utf-8") as f:
        f.write(entry["token"] + "\n")
    os.chmod(path, 0o600)
PY
}

n=0
for guide in "${guides[@]}"; do
  n=$((n + 1))
  dir="$top/guide$n"
  mkdir -p "$dir/home"
  started=$SECONDS
  start_server "$dir"
  echo "== $(basename "$guide"): demo server at $url (ready in $((SECONDS - started)) s)"
  rc=0
  env -u LC_ALL -u LC_MESSAGES -u LANGUAGE -u XDG_CONFIG_HOME -u GPURENT_SERVER -u GPURENT_TOKEN \
    HOME="$dir/home" LANG=C PATH="$top/bin:$PATH" \
    GPURENT_SERVER="$url" GPURENT_TOKEN="$(cat "$dir/demo.db.admin-token")" \
    python3 "$here/guide_doctest.py" run "$guide" "$dir" || rc=$?
  stop_server
  if [[ $rc -ne 0 ]]; then
    status=1
    echo "docs_user_guides: $(basename "$guide") failed; the server's log: $dir/serve.err (KEEP_WORKDIR=1 keeps it)"
  fi
done
exit $status
