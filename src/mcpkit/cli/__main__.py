"""`python -m mcpkit.cli ...`: the mcpkit command, as `python -m mcpkit` runs it."""

import sys

from . import main

sys.exit(main())
