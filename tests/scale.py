"""The knob of the scale tests (marked `scale`): MCPKIT_SCALE is the fraction of their full size they run at,
0.05 unless set. The small size still shows the behaviour (what sessions leave behind is given back); the
full size (.ci/run's scale step sets MCPKIT_SCALE=1) also shows that nothing is kept per session."""

from __future__ import annotations

import os

SCALE = float(os.environ.get("MCPKIT_SCALE") or 0.05)


def scaled(full: int, least: int) -> int:
    """`full` times MCPKIT_SCALE, and at least `least`."""
    return max(least, round(full * SCALE))
