"""The deal algorithm against docs/deals.md: the vectors are read from the page itself."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from engine.cards import ACE, CARD_BY_ID, Card, Suit, ordered_pack
from engine.deal import (
    SEED_MAX,
    SplitMix64,
    deal_number,
    deal_stock,
    parse_seed,
    seed_from_text,
    shuffled,
)

DOC = Path(__file__).parents[2] / "docs" / "deals.md"


def doc_vectors() -> list[dict[str, str]]:
    blocks = re.findall(r"```deal-vector\n(.*?)```", DOC.read_text(), flags=re.S)
    return [dict(line.split(": ", 1) for line in block.strip().splitlines()) for block in blocks]


def test_the_page_has_vectors_for_one_and_two_packs_with_and_without_aces() -> None:
    kinds = {(v["packs"], v["taken_out"]) for v in doc_vectors()}
    assert {("1", "-"), ("1", "A"), ("2", "-"), ("2", "A")} <= kinds


@pytest.mark.parametrize("vector", doc_vectors(), ids=lambda v: f"{v['packs']}p-{v['seed']}")
def test_documented_vector(vector: dict[str, str]) -> None:
    taken = (ACE,) if vector["taken_out"] == "A" else ()
    _, stock = deal_stock(
        int(vector["packs"]), taken, int(vector["seed"]), int(vector["algorithm"])
    )
    assert [card.id for card in stock] == [int(i) for i in vector["ids"].split()]
    assert [str(card) for card in stock] == vector["cards"].split()


def test_splitmix64_matches_published_values() -> None:
    rng = SplitMix64(1234567)
    assert [rng.next() for _ in range(3)] == [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
    ]
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [
        16294208416658607535,
        7960286522194355700,
        487617019471545679,
    ]


def test_bounded_draws_are_in_range_and_cover_it() -> None:
    rng = SplitMix64(99)
    draws = Counter(rng.below(6) for _ in range(6000))
    assert set(draws) == set(range(6))
    assert min(draws.values()) > 850  # 1000 expected each; a biased or broken draw falls short


def test_shuffle_is_a_permutation_and_deterministic() -> None:
    items = list(range(104))
    once = shuffled(items, 5)
    assert sorted(once) == items and once != items
    assert shuffled(items, 5) == once
    assert shuffled(items, 6) != once


def test_seeds_outside_64_bits_are_refused() -> None:
    with pytest.raises(ValueError):
        SplitMix64(SEED_MAX + 1)
    with pytest.raises(ValueError):
        SplitMix64(-1)
    with pytest.raises(ValueError):
        shuffled([1, 2], 1, algorithm=99)


def test_aces_taken_out_come_back_in_ordered_pack_order() -> None:
    removed, stock = deal_stock(2, (ACE,), 3)
    assert [str(card) for card in removed] == ["AS", "AH", "AD", "AC"] * 2
    assert [card.pack for card in removed] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert len(stock) == 96 and all(card.rank != ACE for card in stock)


def test_ordered_pack_ids_and_text() -> None:
    pack = ordered_pack(2)
    assert [card.id for card in pack] == list(range(104))
    assert str(pack[0]) == "AS" and str(pack[9]) == "10S" and str(pack[51]) == "KC"
    assert CARD_BY_ID[53] == Card(2, Suit.S) and CARD_BY_ID[53].pack == 1


def test_text_seeds_hash_and_numbers_stay_numbers() -> None:
    assert seed_from_text("daily:2026-11-22:octagon") == 17103868817714377104
    assert parse_seed("42") == 42
    assert parse_seed("daily:2026-11-22:octagon") == 17103868817714377104
    assert parse_seed(str(SEED_MAX)) == SEED_MAX and parse_seed("007") == 7


@pytest.mark.parametrize(
    "text", [" 5", "5 ", "+5", "-5", "-0", "+1", "-1", "1_000", "\u0663", "\uff15", "5\n", "0x10"]
)
def test_only_ascii_digits_are_a_deal_number_any_other_text_is_hashed(text: str) -> None:
    """RULINGS principle 7: Python's int() reads all of these as numbers; a sign makes text."""
    assert parse_seed(text) == seed_from_text(text)
    with pytest.raises(ValueError, match="digits 0-9 only"):
        deal_number(text)


@pytest.mark.parametrize("text", [str(SEED_MAX + 1), "99999999999999999999999", "9" * 5000])
def test_digits_alone_past_the_largest_deal_number_are_refused_not_hashed(text: str) -> None:
    with pytest.raises(ValueError, match="at most 2\\^64-1"):
        parse_seed(text)


def test_leading_zeros_do_not_make_a_number_larger() -> None:
    assert parse_seed("0" * 30 + "7") == deal_number("0" * 30 + "7") == 7
