"""The commitment to a race's secret seed, published when the race starts.

The seed itself is revealed when the race ends; anyone can then check it against the commitment
and re-deal the game to replay every racer's moves.
"""

from __future__ import annotations

import hashlib


def commitment(seed: int) -> str:
    """The published commitment to a seed: SHA-256 of its decimal text, in hex."""
    return hashlib.sha256(str(seed).encode("ascii")).hexdigest()
