#!/usr/bin/env bash
# A throwaway PostgreSQL server for the store's PostgreSQL tests (TAVO_TEST_POSTGRES) and .ci/run.
#
#   eval "$(scripts/throwaway-postgres.sh start [DIR])"   # initdb into DIR (default: mktemp -d), start
#   cargo test --workspace                                # the PostgreSQL suite runs against it
#   scripts/throwaway-postgres.sh stop [DIR]              # DIR defaults to $TAVO_TEST_POSTGRES_DIR
#
# `start` prints exactly one line on stdout,
#   export TAVO_TEST_POSTGRES=postgres://tavo@127.0.0.1:PORT/tavo_test; export TAVO_TEST_POSTGRES_DIR=DIR
# and everything else on stderr. The server listens on a free loopback port (and a Unix socket in
# DIR), trusts every local connection, runs without fsync, and its role `tavo` is a superuser, so
# tests may create their own databases. Uses Debian's postgresql package: the newest
# /usr/lib/postgresql/*/bin (or TAVO_PG_BIN). initdb refuses to run as root: as root the server runs
# as TAVO_PG_USER, else `postgres` (the package's user) if it exists, else `nobody`.
# `stop` stops it (immediate shutdown) and removes DIR.
set -euo pipefail

# stdout is kept for the one line `start` prints; everything else goes to stderr.
exec 3>&1 1>&2

MARKER=.tavo-throwaway-postgres
say() { echo "throwaway-postgres: $*" >&2; }
die() { say "error: $*"; exit 1; }

usage() {
    echo "usage: $0 start [DIR] | stop [DIR]"
    exit 2
}

pg_bin() {
    local bin
    if [ -n "${TAVO_PG_BIN:-}" ]; then
        bin=$TAVO_PG_BIN
    else
        bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
        if [ -z "$bin" ] && command -v pg_ctl >/dev/null; then
            bin=$(dirname "$(realpath "$(command -v pg_ctl)")")
        fi
    fi
    [ -n "$bin" ] && [ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ] && [ -x "$bin/psql" ] ||
        die "no PostgreSQL binaries (initdb, pg_ctl, psql) found in /usr/lib/postgresql/*/bin;" \
            "install them with: apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql" \
            "(or set TAVO_PG_BIN)"
    echo "$bin"
}

# The user the server runs as: the current one, or an unprivileged one when we are root.
server_user() {
    if [ "$(id -u)" != 0 ]; then
        id -un
    elif [ -n "${TAVO_PG_USER:-}" ]; then
        id -u "$TAVO_PG_USER" >/dev/null 2>&1 || die "TAVO_PG_USER=$TAVO_PG_USER: no such user"
        echo "$TAVO_PG_USER"
    elif id -u postgres >/dev/null 2>&1; then
        echo postgres
    else
        echo nobody
    fi
}

# Runs a command as USER (from /, which every user may enter), through runuser when we are root.
# Without fd 3: a server holding the caller's stdout would keep `$(... start)` waiting forever.
as_user() {
    local user=$1
    shift
    if [ "$(id -u)" != 0 ]; then
        (cd / && "$@") 3>&-
    elif command -v runuser >/dev/null; then
        (cd / && runuser -u "$user" -- "$@") 3>&-
    else
        (cd / && setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups -- "$@") 3>&-
    fi
}

free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
        return
    fi
    local port
    for _ in $(seq 1 100); do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 9<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    die "no free loopback port found"
}

start() {
    local bin user dir port created=0 started=0
    bin=$(pg_bin)
    user=$(server_user)
    if [ -n "${1:-}" ]; then
        dir=$1
        if [ -e "$dir" ]; then
            [ -d "$dir" ] && [ -z "$(ls -A "$dir")" ] || die "$dir exists and is not an empty directory"
        else
            mkdir -p "$dir"
            created=1
        fi
    else
        dir=$(mktemp -d "${TMPDIR:-/tmp}/tavo-postgres.XXXXXX")
        created=1
    fi
    dir=$(realpath "$dir")
    case $dir in
        *[[:space:]\'\"\\]*) die "$dir: the data directory's path may not contain spaces, quotes or backslashes" ;;
    esac
    # The socket path (DIR/.s.PGSQL.PORT) must fit in sockaddr_un (107 bytes).
    [ "${#dir}" -le 80 ] || die "$dir: path too long for the server's Unix socket (80 characters at most)"

    # On any failure: stop what was started, remove what was created.
    trap 'rc=$?; if [ $rc != 0 ]; then
            [ $started = 1 ] && as_user "$user" "$bin/pg_ctl" -D "$dir" -m immediate stop >/dev/null 2>&1 || true
            [ -f "$dir/log" ] && { say "server log:"; tail -n 20 "$dir/log"; } || true
            if [ $created = 1 ]; then rm -rf "$dir"; else find "$dir" -mindepth 1 -delete 2>/dev/null || true; fi
          fi' EXIT

    chmod 700 "$dir"
    if [ "$(id -u)" = 0 ]; then
        chown "$user:" "$dir"
        as_user "$user" test -w "$dir" ||
            die "$dir is not reachable by user $user (a parent directory closed to it?); set TMPDIR or pass a DIR under /tmp"
    fi

    say "initdb into $dir as user $user ($bin)"
    local out
    out=$(as_user "$user" "$bin/initdb" -D "$dir" -A trust -U tavo --no-sync -E UTF8 --locale=C 2>&1) || {
        echo "$out"
        die "initdb failed"
    }
    touch "$dir/$MARKER"

    local attempt
    for attempt in 1 2 3; do
        port=$(free_port)
        say "starting on 127.0.0.1:$port (attempt $attempt)"
        if as_user "$user" "$bin/pg_ctl" -D "$dir" -l "$dir/log" -w -t 60 -o "-c listen_addresses=127.0.0.1 -p $port -k '$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" start >&2; then
            started=1
            break
        fi
        # Another process may have taken the port between its choice and the bind: try another.
        grep -q "could not bind\|Address already in use" "$dir/log" 2>/dev/null || die "pg_ctl start failed"
    done
    [ $started = 1 ] || die "pg_ctl start failed three times"

    "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U tavo -d postgres -c 'CREATE DATABASE tavo_test' ||
        die "CREATE DATABASE tavo_test failed"
    trap - EXIT
    say "ready: postgres://tavo@127.0.0.1:$port/tavo_test (stop with: $0 stop $dir)"
    echo "export TAVO_TEST_POSTGRES=postgres://tavo@127.0.0.1:$port/tavo_test; export TAVO_TEST_POSTGRES_DIR=$dir" >&3
}

stop() {
    local dir=${1:-${TAVO_TEST_POSTGRES_DIR:-}}
    [ -n "$dir" ] || die "stop: no DIR given and TAVO_TEST_POSTGRES_DIR is not set"
    [ -d "$dir" ] || die "stop: $dir is not a directory"
    # Never remove a directory this script did not make a server in.
    [ -f "$dir/$MARKER" ] || die "stop: $dir is not a throwaway server's directory (no $MARKER), left alone"
    if [ -f "$dir/postmaster.pid" ]; then
        local bin owner
        bin=$(pg_bin)
        owner=$(stat -c %U "$dir")
        say "stopping the server in $dir"
        as_user "$owner" "$bin/pg_ctl" -D "$dir" -m immediate stop >&2 || say "pg_ctl stop failed; removing $dir anyway"
    fi
    rm -rf "$dir"
    say "removed $dir"
}

case "${1:-}" in
    start) shift; [ $# -le 1 ] || usage; start "$@" ;;
    stop) shift; [ $# -le 1 ] || usage; stop "$@" ;;
    *) usage ;;
esac
