"""``python -m bullring.server.cli``: the ``bullring`` command, as the installed script runs it."""

import sys

from bullring.server.cli.main import main

sys.exit(main())
