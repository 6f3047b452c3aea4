#!/bin/sh
# The Bullring image's entrypoint. CI runs it outside Docker too (tests/install/test_docker.py), so
# it assumes nothing of the container but a `bullring` command and these variables:
#
#   BULLRING            the command to run (default: bullring, from PATH)
#   BULLRING_DB         database URL (default: SQLite in $BULLRING_DATA); PostgreSQL as
#                       postgresql+psycopg://USER:PASSWORD@HOST:5432/DB
#   BULLRING_DATA       a writable folder (default: /var/lib/bullring): SQLite, bot tokens
#   BULLRING_HOST       the address the server binds (default: 0.0.0.0)
#   BULLRING_PORT       the gRPC port (default: 50051)
#   BULLRING_SERVER     the server a bot connects to (default: 127.0.0.1:$BULLRING_PORT), or
#                       a fleet's servers, comma separated (HOST:PORT,HOST:PORT)
#   BULLRING_TOKEN      a bot's token; without it `house-bot` registers the bot itself
#
# Commands:
#   serve [ARGS...]                    bullring serve on $BULLRING_HOST:$BULLRING_PORT, ARGS
#                                      added (--ladder, --table-size, --house-bots, ...)
#   health                             exit 0 when the local server is SERVING (HEALTHCHECK)
#   house-bot NAME SPEC GAME [ARGS...] play GAME's ladder as the registered bot NAME with
#                                      the bot SPEC (house:greedy, module:Class, ...); the
#                                      bot is registered on first start and its token kept
#                                      in $BULLRING_DATA/tokens/NAME
#   anything else                      run as a command (bullring replay export ..., sh)
#
# Each command replaces this shell (exec), so SIGTERM from `docker stop` reaches the server,
# which shuts down gracefully (live matches stored as aborted) and exits 0.
set -eu

BULLRING=${BULLRING:-bullring}
BULLRING_DATA=${BULLRING_DATA:-/var/lib/bullring}
BULLRING_DB=${BULLRING_DB:-sqlite:///$BULLRING_DATA/bullring.db}
BULLRING_HOST=${BULLRING_HOST:-0.0.0.0}
BULLRING_PORT=${BULLRING_PORT:-50051}
BULLRING_SERVER=${BULLRING_SERVER:-127.0.0.1:$BULLRING_PORT}

say() { echo "entrypoint: $*" >&2; }

house_bot_token() {  # NAME: print the bot's token, registering the bot the first time
    tokens="$BULLRING_DATA/tokens"
    mkdir -p "$tokens"
    if [ ! -s "$tokens/$1" ]; then
        if out=$($BULLRING bots add "$1" --owner house --db "$BULLRING_DB" 2>&1); then
            say "registered bot $1"
        elif out=$($BULLRING bots rotate-token "$1" --db "$BULLRING_DB" 2>&1); then
            say "bot $1 was registered before without a kept token; gave it a new one"
        else
            say "cannot register bot $1: $out"
            exit 2
        fi
        (umask 077 && printf '%s\n' "$out" | tail -n 1 > "$tokens/$1")
    fi
    cat "$tokens/$1"
}

command=${1:-serve}
[ $# -gt 0 ] && shift
case "$command" in
    serve)
        exec $BULLRING serve --host "$BULLRING_HOST" --port "$BULLRING_PORT" \
            --db "$BULLRING_DB" "$@"
        ;;
    health)
        exec $BULLRING health --server "127.0.0.1:$BULLRING_PORT" "$@"
        ;;
    house-bot)
        if [ $# -lt 3 ]; then
            say "usage: house-bot NAME SPEC GAME [bullring bot options]"
            exit 2
        fi
        name=$1 spec=$2 game=$3
        shift 3
        if [ -z "${BULLRING_TOKEN:-}" ]; then
            BULLRING_TOKEN=$(house_bot_token "$name")
        fi
        export BULLRING_TOKEN  # read by `bullring bot`: no token on the command line
        exec $BULLRING bot --server "$BULLRING_SERVER" --ladder "$game" "$@" "$spec"
        ;;
    *)
        exec "$command" "$@"
        ;;
esac
