"""`python -m mcpkit ...`: the mcpkit command run by this interpreter (what `mcpkit install` writes)."""

import sys

from .cli import main

sys.exit(main())
