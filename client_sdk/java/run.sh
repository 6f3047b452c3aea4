#!/bin/sh
# Run the bot: ./run.sh --server HOST:PORT --token TOKEN [--ladder GAME] [--matches N]
# BOT_CLASS names another bot class (default StarterBot); BOT_CLASSPATH adds to the class path.
cd "$(dirname "$0")"
exec java -cp "${BOT_CLASSPATH:+$BOT_CLASSPATH:}$(cat build/classpath)" "${BOT_CLASS:-StarterBot}" "$@"
