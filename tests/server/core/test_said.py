"""What a race says (``server.core.said``): ``Said`` is the list of messages to send with the
facts to store beside it, and ``Outgoing.text`` is the frame the race made, when it made one."""

from __future__ import annotations

import pytest

from server.core.said import Facts, MoveMade, Outgoing, RaceBegan, Said, as_frame, says
from wire.protocol import SERVER_MESSAGE, Countdown


def countdown(seq: int) -> Countdown:
    return Countdown(seq=seq, starts_at_ms=1_000_000, seconds=3.0)


def test_said_is_the_list_of_messages_with_its_facts_beside_it() -> None:
    out = [Outgoing(None, countdown(1)), Outgoing("p1", countdown(2))]
    moves = [MoveMade("p1", 0, "resign", 1250)]
    began = RaceBegan(1_000_000, ("p1", "p2"))
    said = Said(out, moves, began)
    assert said == out and list(said) == out
    assert (said.moves, said.began, said.ended) == (moves, began, None)


def test_said_with_nothing_said_is_an_empty_list_with_no_facts() -> None:
    said = Said()
    assert said == [] and not said
    assert (list(said.moves), said.began, said.ended) == ([], None, None)


def test_what_two_calls_said_adds_up_as_lists_do() -> None:
    first = Said([Outgoing(None, countdown(1))], [MoveMade("p1", 0, "resign", 10)])
    second = Said([Outgoing(None, countdown(2))])
    assert first + second == [*first, *second]


def test_the_text_sent_is_the_frame_the_race_made() -> None:
    made = Outgoing(None, countdown(1), frame='{"type":"countdown","seq":1}')
    assert made.text() == '{"type":"countdown","seq":1}'


def test_without_a_frame_the_text_sent_is_the_message_as_json() -> None:
    message = countdown(1)
    assert Outgoing("p1", message).text() == as_frame(message)
    assert SERVER_MESSAGE.validate_json(as_frame(message)) == message


class Counter:
    """A thing that says, as the race does: ``says`` collects into its ``facts``."""

    def __init__(self) -> None:
        self.facts = Facts()
        self.made = 0

    @says
    def make(self, inner: int) -> list[Outgoing]:
        self.made += 1
        self.facts.moves.append(MoveMade("p1", self.made - 1, "resign", self.made))
        out = [Outgoing(None, countdown(self.made))]
        if inner:
            out += self.make(inner - 1)
        return out

    @says
    def refuse(self) -> list[Outgoing]:
        self.make(0)
        raise ValueError("refused after making a move")


def test_the_outermost_call_carries_every_fact_the_calls_under_it_made() -> None:
    counter = Counter()
    said = counter.make(2)
    assert [o.message.seq for o in said] == [1, 2, 3]
    assert [move.index for move in said.moves] == [0, 1, 2]
    assert counter.facts.moves == [] and counter.facts.depth == 0
    assert list(counter.make(0).moves) == [MoveMade("p1", 3, "resign", 4)], "afresh after"


def test_facts_made_before_a_refusal_are_kept_for_the_next_call_to_carry() -> None:
    counter = Counter()
    with pytest.raises(ValueError):
        counter.refuse()
    assert counter.facts.depth == 0
    assert [move.index for move in counter.make(0).moves] == [0, 1]
