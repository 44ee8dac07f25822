"""Importing this puts examples/ on sys.path, so tests can import the example servers."""

import sys
from pathlib import Path

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")
if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)
