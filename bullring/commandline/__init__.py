"""What every Bullring command shares: argument types that check a value when it is parsed,
and one error boundary that turns the project's errors into one line and an exit status.

Every option of ``bullring``, ``bullring-bot``, ``bullring-arena``, ``bullring-tournament`` and
``bullring-mcp`` is parsed by one of the types here, so a wrong value is refused before any
work starts, in one line that names the option:
``bullring arena: --games: must be at least 1, not '-5'``.
The boundary (``run``) maps the project's errors to the exit statuses of ``EXIT_STATUSES``;
any other exception is a bug and keeps its traceback.

This module is imported before every command runs, so it imports nothing heavy at the top.
"""

from typing import TYPE_CHECKING

from bullring.commandline.boundary import (
    EXIT_STATUSES,
    Classifier,
    CommandError,
    DatabaseError,
    NotFoundError,
    Parser,
    RefusedError,
    UnreachableError,
    UsageError,
    bot_traceback,
    command,
    known_error,
    new_parser,
    run,
    run_async,
    version,
)
from bullring.commandline.games import (
    BotSpec,
    BotSpecList,
    GameList,
    GameName,
    HouseBotList,
    HouseSeat,
    LadderSetting,
    SettingPair,
    TableSizeArg,
    game_settings,
)
from bullring.commandline.logs import OneLineFormatter, escaped, has_control_characters
from bullring.commandline.values import (
    BOT_NAME,
    ArgType,
    BotName,
    BotNames,
    DatabaseUrl,
    Host,
    Integer,
    MatchId,
    Opponents,
    Origin,
    Port,
    ReadablePath,
    Seconds,
    ServerAddress,
    ServerAddresses,
    Text,
    Token,
    When,
    WritableDir,
    WritableFile,
    bot_name_problem,
    non_negative,
    positive,
    writable_folder,
)
from bullring.errors import ExitCode

__all__ = [
    "BOT_NAME",
    "EXIT_STATUSES",
    "ArgType",
    "BotName",
    "BotNames",
    "BotSpec",
    "BotSpecList",
    "Classifier",
    "CommandError",
    "DatabaseError",
    "DatabaseUrl",
    "ExitCode",
    "GameList",
    "GameName",
    "Host",
    "HouseBotList",
    "HouseSeat",
    "Integer",
    "LadderSetting",
    "MatchId",
    "NotFoundError",
    "OneLineFormatter",
    "Opponents",
    "Origin",
    "Parser",
    "Port",
    "ReadablePath",
    "RefusedError",
    "Seconds",
    "ServerAddress",
    "ServerAddresses",
    "SettingPair",
    "TableSizeArg",
    "Text",
    "Token",
    "UnreachableError",
    "UsageError",
    "When",
    "WritableDir",
    "WritableFile",
    "bot_name_problem",
    "bot_traceback",
    "command",
    "escaped",
    "game_settings",
    "has_control_characters",
    "known_error",
    "new_parser",
    "non_negative",
    "positive",
    "run",
    "run_async",
    "version",
    "writable_folder",
]

if TYPE_CHECKING:
    from bullring.commandline.boundary import Commands as Commands
