#!/usr/bin/env bash
# A PostgreSQL cluster for one ctest run (CMakeLists.txt, fixture pg_cluster): the store tests'
# PostgreSQL cases connect to it through GPURENT_TEST_PG_URL instead of each test process starting
# its own (src/store/pg_test_cluster.h does that when the variable is unset).
#   pg_cluster.sh start DIR PORT   initdb -A trust in DIR/data; the server listens only on its unix
#                                  socket in DIR (PORT names the socket, no TCP port is taken); fsync on
#   pg_cluster.sh stop DIR         pg_ctl -m immediate stop, then DIR is removed
# As root, initdb and postgres run as the `postgres` system user (they refuse root), DIR owned by it.
# Missing PostgreSQL binaries fail the fixture (and so every test needing it), never skip:
# scripts/install-deps.sh installs them (postgresql-15).
set -euo pipefail
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: pg_cluster.sh start DIR PORT | stop DIR" >&2
  exit 2
fi

bindir=${GPURENT_PG_BINDIR:-}
if [ -z "$bindir" ]; then
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
      bindir=$d
      break
    fi
  done
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ] || [ ! -x "$bindir/pg_ctl" ]; then
  echo "pg_cluster: PostgreSQL server binaries (initdb, pg_ctl) not found in \$GPURENT_PG_BINDIR or" \
    "/usr/lib/postgresql/*/bin: run scripts/install-deps.sh (it installs postgresql-15)" >&2
  exit 1
fi

as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  if ! id postgres >/dev/null 2>&1; then
    echo "pg_cluster: as root the cluster runs as the system user 'postgres', which does not exist" \
      "(postgresql-15 creates it: scripts/install-deps.sh)" >&2
    exit 1
  fi
  as_pg=(runuser -u postgres --)
fi

stop_cluster() {
  if [ -f "$dir/data/postmaster.pid" ]; then
    (cd / && "${as_pg[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop) >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case $cmd in
  start)
    port=${3:?pg_cluster.sh start DIR PORT}
    stop_cluster  # a cluster an interrupted run left behind
    sock="$dir/.s.PGSQL.$port"
    if [ ${#sock} -gt 100 ]; then
      echo "pg_cluster: the socket path $sock is too long for a unix socket; use a shorter build directory" >&2
      exit 1
    fi
    mkdir -p "$dir"
    chmod 700 "$dir"
    if [ ${#as_pg[@]} -gt 0 ]; then
      chown postgres: "$dir"
      if ! runuser -u postgres -- test -w "$dir"; then
        echo "pg_cluster: the postgres user cannot reach $dir (a parent folder is closed to it)" >&2
        exit 1
      fi
    fi
    t0=$(date +%s%N)
    if ! (cd "$dir" && "${as_pg[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-locale \
      --no-sync) >"$dir/setup.log" 2>&1; then
      cat "$dir/setup.log" >&2
      exit 1
    fi
    cat >>"$dir/data/postgresql.conf" <<EOF
listen_addresses = ''
port = $port
unix_socket_directories = '$dir'
fsync = on
max_connections = 300
EOF
    if ! (cd "$dir" && "${as_pg[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start) \
      >>"$dir/setup.log" 2>&1; then
      cat "$dir/setup.log" "$dir/server.log" >&2
      exit 1
    fi
    echo "pg_cluster: started in $((($(date +%s%N) - t0) / 1000000)) ms:" \
      "postgresql:///postgres?host=$dir&port=$port&user=postgres"
    ;;
  stop)
    stop_cluster
    echo "pg_cluster: stopped, $dir removed"
    ;;
  *)
    echo "usage: pg_cluster.sh start DIR PORT | stop DIR" >&2
    exit 2
    ;;
esac
