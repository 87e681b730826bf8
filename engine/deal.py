"""Portable seeded deals: the exact algorithm is specified in docs/deals.md.

A deal is a pure function of (cards in ordered-pack order, 64-bit seed, algorithm version).
Version 1 draws 64-bit words from SplitMix64, turns them into bounded integers by rejection (no
modulo bias), and shuffles with Fisher-Yates from the last position down. Python's ``random``
module is deliberately not used: its algorithm is an implementation detail of CPython.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import TypeVar

from engine.cards import Card, ordered_pack

T = TypeVar("T")

DEAL_ALGORITHM = 1
"""The current deal algorithm version; every stored game names the version it was dealt with."""
DEAL_ALGORITHMS = (1,)

MASK64 = (1 << 64) - 1
SEED_MAX = MASK64


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64 generator (the 2014 paper's constants)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= SEED_MAX:
            raise ValueError(f"a seed is a 64-bit deal number 0..{SEED_MAX}, not {seed}")
        self.state = seed

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in 0..n-1: reject words at or above the largest multiple of n."""
        if not 0 < n <= 1 << 64:
            raise ValueError("n must be in 1..2**64")
        limit = (1 << 64) - (1 << 64) % n
        while True:
            word = self.next()
            if word < limit:
                return word % n


def shuffled(items: Iterable[T], seed: int, algorithm: int = DEAL_ALGORITHM) -> list[T]:
    """Fisher-Yates: for i from len-1 down to 1, swap position i with position below(i + 1)."""
    if algorithm not in DEAL_ALGORITHMS:
        raise ValueError(f"unknown deal algorithm version {algorithm}")
    result = list(items)
    rng = SplitMix64(seed)
    for i in range(len(result) - 1, 0, -1):
        j = rng.below(i + 1)
        result[i], result[j] = result[j], result[i]
    return result


def deal_stock(
    packs: int, taken_out: Sequence[int], seed: int, algorithm: int = DEAL_ALGORITHM
) -> tuple[list[Card], list[Card]]:
    """Shuffle the pack(s) for a game.

    ``taken_out`` lists ranks removed from the ordered pack before shuffling (RULINGS: the aces of
    Puss in the Corner and The Octagon). Returns ``(taken_out_cards, stock)``, both in order; the
    stock's first card is the first card dealt.
    """
    pack = ordered_pack(packs)
    removed = [card for card in pack if card.rank in taken_out]
    rest = [card for card in pack if card.rank not in taken_out]
    return removed, shuffled(rest, seed, algorithm)


def seed_from_text(text: str) -> int:
    """A text seed (say a daily deal's name) as a deal number: the first 8 bytes of
    SHA-256(UTF-8 text), read big-endian."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


DIGITS = frozenset("0123456789")
SEED_MAX_DIGITS = len(str(SEED_MAX))
SHOWN_DIGITS = 40
"""How much of a refused number an error message repeats."""


def is_deal_number(text: str) -> bool:
    """RULINGS principle 7: a seed written as a number is plain ASCII decimal digits, nothing
    else (``str.isdigit`` and ``int`` also take blanks, signs, underscores and other scripts'
    digits, which a reimplementation following docs/deals.md would hash)."""
    return bool(text) and DIGITS.issuperset(text)


def deal_number(text: str) -> int:
    """A deal number written in ASCII decimal digits; ``ValueError`` for any other text or a
    number past 2^64-1 (said at once for more digits than 2^64-1 has, however many)."""
    if not is_deal_number(text):
        raise ValueError(f"a deal number is written in the digits 0-9 only, not {text!r}")
    significant = text.lstrip("0")
    if len(significant) > SEED_MAX_DIGITS or int(significant or "0") > SEED_MAX:
        shown = (
            text if len(text) <= SHOWN_DIGITS else f"{text[:SHOWN_DIGITS]}... ({len(text)} digits)"
        )
        raise ValueError(f"a deal number is at most 2^64-1 = {SEED_MAX}, not {shown}")
    return int(significant or "0")


def parse_seed(text: str) -> int:
    """A seed as a person types it (docs/deals.md section 6, RULINGS principle 7): ASCII
    decimal digits alone are the deal number itself; any other text, a signed number such as
    ``-1`` or ``+1`` included, is hashed as above. Digits alone past 2^64-1 are refused with
    ``ValueError``: they were meant as a number that no deal has, and hashing them would
    quietly deal something else."""
    if is_deal_number(text):
        return deal_number(text)
    return seed_from_text(text)
