"""Protocol v1: every message on the wire, as pydantic models. The one source of truth.

JSON text frames. Each has a ``type``. Requests may carry an ``id`` of the client's choosing,
echoed in the reply (or in the error). Room events carry ``seq``, counting from 1 in each room,
so a client can tell whether it missed one. ``docs/protocol.schema.json`` is generated from these
models (``python -m server.net.schema``) and a test fails when it is stale; ``docs/protocol.md``
explains every message with an example session.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    field_validator,
    model_validator,
)

from engine.deal import SEED_MAX, deal_number
from wire.codes import ErrorCode as ErrorCode
from wire.names import NAME_RULE, PlayerName
from wire.ratings import RatingChange

PROTOCOL_VERSION = 1

RequestId = Annotated[
    str | None,
    Field(
        max_length=64,
        description=(
            "Chosen by the client, echoed in the reply (and in an error). Send one: a reply "
            "without an "
            "id looks exactly like a room event or an unasked view."
        ),
    ),
]
Code = Annotated[
    str,
    Field(
        min_length=4, max_length=16, pattern=r"^[A-Za-z0-9]+$", description="A room's join code."
    ),
]
RuleSetName = Annotated[str, Field(max_length=40, description="A name from the rule set list.")]
MoveText = Annotated[str, Field(max_length=80, description="A move's text form (docs/moves.md).")]

GameStatus = Annotated[
    Literal["in_progress", "won", "lost", "resigned"],
    Field(
        description=(
            "The game, as its rules see it: in_progress (also for a racer whose time ran out: the "
            "rules "
            "did not end the game); won (every card home); lost (no legal move and no redeal "
            "left); "
            "resigned (the player resigned, or the server resigned for a player who left the race, "
            "stayed away past the grace period or made no move for the idle while)."
        )
    ),
]
SeatStatus = Annotated[
    Literal["waiting", "racing", "won", "lost", "resigned", "timed_out", "abandoned"],
    Field(
        description=(
            "The racer, as the race sees them: waiting (before the start); racing; then, once "
            "finished, won, lost or resigned as their game ended, timed_out (the time limit, or "
            "the "
            "longest a race runs, came first) or abandoned (away past the grace period, or no move "
            "for the idle while: the server resigned for them)."
        )
    ),
]
FinalStatus = Annotated[
    Literal["won", "lost", "resigned", "timed_out", "abandoned"],
    Field(description="How the racer finished, in the words of a seat's status."),
]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- client to server -------------------------------------------------------------------------


class Hello(Message):
    """First message: a new player gives a name and gets a token; a returning one gives it.
    With neither, the connection is anonymous: it may watch (spectate, boards, race records)
    but not play."""

    type: Literal["hello"]
    id: RequestId = None
    name: Annotated[PlayerName | None, Field(description=NAME_RULE)] = None
    token: Annotated[str | None, Field(max_length=128)] = None
    own_progress: bool = Field(
        default=True,
        description=(
            "Whether this connection gets the room's progress event for its player's own moves. "
            "move_ok says the same figures and carries that event's seq, so a client that reads "
            "them there can say false: one frame fewer a move."
        ),
    )
    bot: bool = Field(
        default=False,
        description=(
            "This client is a program playing by itself. A player made by a hello with bot true, "
            "or whose token comes with bot true, is a bot account for ever (whatever later hellos "
            "say): marked on every board, never rated, and refused in rated quick races "
            "(bots_not_rated). A race with a bot in it rates nobody."
        ),
    )


def _deal_number_text(value: object) -> object:
    """A deal number's text, checked before its field's pattern so that what the pattern would
    refuse gets a clear reason (RULINGS principle 7): not ASCII digits alone (``-1`` is text,
    not a number), or past 2^64-1 however many digits. Leading zeros are dropped (``007`` is
    7). What is not a string is left to the field's own type check."""
    return str(deal_number(value)) if isinstance(value, str) else value


class DealChoice(Message):
    kind: Literal["secret", "number", "daily"] = Field(
        default="secret",
        description=(
            "secret: a random deal nobody knows until the end; number: the deal given in 'number'. "
            "'daily' names the daily deal's rooms and is refused here: send a 'daily' request."
        ),
    )
    number: Annotated[
        str | None,
        Field(
            pattern=r"^[0-9]{1,20}$",
            description="For kind 'number': the deal number as a decimal string, 0..2^64-1.",
        ),
    ] = None
    winnable: bool = Field(
        default=False,
        description=(
            "For kind 'secret': a deal the solver has proved winnable (with full knowledge of the "
            "hidden cards), from the server's pool; if none is ready within a few seconds, an "
            "unproved secret deal, and the room says so (winnable: false)."
        ),
    )

    @field_validator("number", mode="before")
    @classmethod
    def _a_deal_number(cls, number: object) -> object:
        return _deal_number_text(number)

    @model_validator(mode="after")
    def _a_number_for_a_chosen_deal(self) -> DealChoice:
        if self.kind == "daily":
            raise ValueError("the daily deal is played alone: send 'daily'")
        if self.kind == "number" and (self.number is None or int(self.number) > SEED_MAX):
            raise ValueError("a chosen deal needs a number 0..2^64-1")
        if self.winnable and self.kind != "secret":
            raise ValueError("only a secret deal can be asked to be winnable")
        return self


class CreateRoom(Message):
    type: Literal["create_room"]
    id: RequestId = None
    rule_set: RuleSetName
    deal: DealChoice = Field(default_factory=DealChoice)
    seats: Annotated[int, Field(ge=2, le=8)] = 4
    time_limit_s: Annotated[
        int | None,
        Field(
            ge=30,
            le=24 * 3600,
            description=(
                "Seconds from the start; none: no time limit. Either way a race ends at the "
                "server's "
                "longest race (2 hours by default: docs/protocol.md, 'How long a race lasts')."
            ),
        ),
    ] = None
    public: bool = Field(
        default=False,
        description=(
            "List the room, while it waits in its lobby with a free seat, at GET /api/rooms."
        ),
    )


class JoinRoom(Message):
    type: Literal["join"]
    id: RequestId = None
    code: Code


class Spectate(Message):
    type: Literal["spectate"]
    id: RequestId = None
    code: Code


class LeaveRoom(Message):
    type: Literal["leave"]
    id: RequestId = None


class Ready(Message):
    type: Literal["ready"]
    id: RequestId = None
    ready: bool = True


class StartRace(Message):
    """The host starts the countdown without waiting for everyone to be ready."""

    type: Literal["start"]
    id: RequestId = None


class MoveObject(Message):
    """A move's JSON object form (docs/moves.md): the deepest card moved (left out only where
    the player cannot know it), the piles it goes from and to, how many cards move, and
    whether they go under the target pile."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    card: Annotated[str | None, Field(max_length=3)] = None
    from_: Annotated[str, Field(alias="from", max_length=24)]
    to: Annotated[str, Field(max_length=24)]
    count: Annotated[int, Field(ge=1, le=104)] = 1
    bottom: bool = False


class ActionObject(Message):
    """An action's JSON object form: ``{"action": "redeal"}`` is the move ``redeal``."""

    action: Literal["resign", "redeal", "turn", "afresh"]


class MakeMove(Message):
    type: Literal["move"]
    id: RequestId = None
    move: MoveText | MoveObject | ActionObject = Field(
        description="The move's text (docs/moves.md) or its JSON object form."
    )


class Resign(Message):
    type: Literal["resign"]
    id: RequestId = None


class Resume(Message):
    """After a reconnect (and hello with the token): rejoin the room and get what was missed."""

    type: Literal["resume"]
    id: RequestId = None
    code: Code
    last_seq: Annotated[int, Field(ge=0)] = 0


class AskHint(Message):
    """The next move of a winning line from your position: only when practising alone on a
    chosen deal (a room of one racer, deal kind 'number'); refused with ``no_hints`` in a race
    with others, on a secret deal and on the daily deal. The solver sees the hidden cards."""

    type: Literal["hint"]
    id: RequestId = None


class FollowVerdicts(Message):
    """Practising alone on a chosen deal (where a hint may be asked for): after each of your
    moves, and at once, the server says ``live_verdict``, the solver's word on your position:
    still winnable, no win is possible from here any more, or unknown, as KPat shows it;
    ``on`` false stops it. Refused as ``hint`` is (``no_hints``, ``not_racing``). The reply is
    ``ok``; the verdicts follow, each once searched."""

    type: Literal["live_verdict"]
    id: RequestId = None
    on: bool = True


class PlayDaily(Message):
    """Start today's daily deal of a rule set: alone, on your own clock, once per day."""

    type: Literal["daily"]
    id: RequestId = None
    rule_set: RuleSetName


class GetLeaderboard(Message):
    type: Literal["leaderboard"]
    id: RequestId = None
    rule_set: RuleSetName
    board: Literal["fastest", "most_wins", "deal", "daily"] = "fastest"
    period: Literal["today", "week", "all"] = "all"
    deal: Annotated[
        str | None,
        Field(
            pattern=r"^[0-9]{1,20}$",
            description="For board 'deal': the deal number, 0..2^64-1 in ASCII digits.",
        ),
    ] = None
    day: Annotated[
        str | None,
        Field(
            pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            description="For board 'daily': the UTC day, a real date; today if absent.",
        ),
    ] = None
    around_me: bool = False
    limit: Annotated[int, Field(ge=1, le=100)] = 20

    # The patterns say ASCII digits ("\d" would let full-width and other Unicode digits through,
    # which int() and date.fromisoformat() then read or choke on); these check what a pattern
    # cannot, so that the WebSocket request and the HTTP query refuse the same things alike.

    @field_validator("deal", mode="before")
    @classmethod
    def _deal_in_range(cls, deal: object) -> object:
        return _deal_number_text(deal)

    @field_validator("day")
    @classmethod
    def _real_day(cls, day: str | None) -> str | None:
        if day is not None:
            try:
                date.fromisoformat(day)  # ValueError for 2026-13-45, 2026-02-30, 0000-01-01
            except ValueError:
                raise ValueError(f"the day must be a real date, YYYY-MM-DD, not {day!r}") from None
        return day

    @model_validator(mode="after")
    def _deal_board_names_its_deal(self) -> GetLeaderboard:
        if self.board == "deal" and self.deal is None:
            raise ValueError("the deal board needs the deal number in 'deal'")
        return self


class GetRace(Message):
    type: Literal["race_record"]
    id: RequestId = None
    race_id: Annotated[str, Field(max_length=64)]


class Rematch(Message):
    """A racer seated in a finished race's room: offer to race again (same room, seats and
    options, on a new deal: a new secret one, or the same chosen number), or answer the offer
    open. Not for a daily deal."""

    type: Literal["rematch"]
    id: RequestId = None
    accept: bool = Field(
        default=True,
        description=(
            "True: offer a rematch, or accept the one offered; false: decline it, which ends the "
            "offer. The rematch happens once every racer still in the room has accepted."
        ),
    )


class QuickRace(Message):
    """Wait in a rule set's queue to be matched with other players waiting there, rated or
    not (docs/protocol.md, "Quick race"). Replied to with ``queued``; then ``queue`` every
    wave while waiting, and once matched ``matched`` followed by the room, as a ``join`` gets."""

    type: Literal["quick_race"]
    id: RequestId = None
    rule_set: RuleSetName
    rated: bool = Field(
        default=True,
        description=(
            "Rated: matched with players of a close rating (a window that widens with the "
            "wait). Unrated: with anyone waiting in the unrated queue."
        ),
    )
    bot_after_s: Annotated[
        int | None,
        Field(
            ge=5,
            le=600,
            description=(
                "If nobody is matched within this many seconds, race the server's practice bot "
                "instead, unrated; none: wait until matched or leave_queue."
            ),
        ),
    ] = None


class LeaveQueue(Message):
    """Stop waiting in the quick race queue. Replied to with ``ok``."""

    type: Literal["leave_queue"]
    id: RequestId = None


ClientMessage = Annotated[
    Hello
    | CreateRoom
    | JoinRoom
    | Spectate
    | LeaveRoom
    | Ready
    | StartRace
    | MakeMove
    | Resign
    | Resume
    | AskHint
    | FollowVerdicts
    | PlayDaily
    | GetLeaderboard
    | GetRace
    | Rematch
    | QuickRace
    | LeaveQueue,
    Field(discriminator="type"),
]
CLIENT_MESSAGE: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)


# -- server to client -------------------------------------------------------------------------


class Welcome(Message):
    type: Literal["welcome"] = "welcome"
    id: RequestId = None
    protocol: int = PROTOCOL_VERSION
    player_id: str
    name: str
    token: str | None = Field(
        default=None, description="Only for a new player: keep it to come back as yourself."
    )
    anonymous: bool = Field(
        default=False,
        description=(
            "A hello with neither name nor token: no identity (player_id and name are empty); the "
            "connection may spectate and read boards and races, nothing else."
        ),
    )
    bot: bool = Field(
        default=False,
        description=(
            "Whether the player is a bot account (Hello.bot): false for an anonymous connection."
        ),
    )


class Ok(Message):
    """The reply to a request whose effect everyone sees as room events (ready, start, leave):
    it comes after them."""

    type: Literal["ok"] = "ok"
    id: RequestId = None


class ErrorMessage(Message):
    type: Literal["error"] = "error"
    id: RequestId = None
    code: ErrorCode = Field(
        description=("A stable, machine-readable code (docs/protocol.md says what each means).")
    )
    message: str = Field(description="A sentence for a person.")


class SeatInfo(Message):
    player_id: str
    name: str
    ready: bool
    connected: bool = Field(
        description=(
            "False while the player has no connection to the room (dropped, or left the race)."
        )
    )
    on_foundations: int = Field(default=0, description="Cards home now; 0 before the start.")
    total: int = Field(default=0, description="Cards in the game; 0 before the start.")
    moves: int = Field(default=0, description="Moves made; 0 before the start.")
    status: SeatStatus = "waiting"
    bot: bool = Field(default=False, description="The racer is a bot account (Hello.bot).")


class RematchPending(Message):
    """A rematch offer still open: who has accepted it and whom it waits for."""

    accepted: list[str] = Field(description="The racers (player ids) who have accepted.")
    waiting: list[str] = Field(description="The racers still in the room yet to answer.")


class RoomState(Message):
    """The room as everyone in it sees it: a room event on every change of seats, readiness,
    phase or connection, and the reply to create_room, join, spectate and daily."""

    type: Literal["room"] = "room"
    id: RequestId = None
    seq: int = Field(
        description=(
            "As a room event, its number. As a reply, the number of the latest room event (0 when "
            "there is none yet): the reply is not an event of its own."
        )
    )
    code: str
    rule_set: str
    deal_kind: Literal["secret", "number", "daily"] = Field(
        description=(
            "secret: a deal drawn for this race, revealed at its end; number: a deal the host "
            "chose (everyone knows its number, so anyone can compute its face-down cards); daily: "
            "today's daily deal."
        )
    )
    ranked: bool = Field(
        default=True,
        description=(
            "Whether the race's results count on the fastest and most wins boards (and a daily "
            "deal's on the daily board). False for a chosen deal: practice, shown on that deal's "
            "board only. A daily deal is ranked, but a racer whose identity was made today is "
            "not ranked on today's boards (docs/protocol.md). Every result is on its deal's "
            "board."
        ),
    )
    winnable: bool | None = Field(
        default=None,
        description=(
            "For a secret deal asked to be winnable: true, the deal was proved winnable before the "
            "race (by the solver, which sees the hidden cards: winnable for a player who knew "
            "them); false, none was ready in time and the deal is an unproved secret one. Null: "
            "not asked."
        ),
    )
    phase: Literal["lobby", "countdown", "racing", "finished"]
    public: bool = Field(default=False, description="Listed at GET /api/rooms while open.")
    quick: Literal["rated", "unrated"] | None = Field(
        default=None,
        description=(
            "A quick race's room (quick_race): only the players matched may sit, and its "
            "countdown begins by itself. Null for a room opened with create_room."
        ),
    )
    host: str
    seats_max: int
    time_limit_s: int | None
    seats: list[SeatInfo]
    spectators: int
    commitment: str | None = Field(
        default=None, description="SHA-256 (hex) of the seed's decimal text, from the start on."
    )
    deal_number: str | None = Field(
        default=None,
        description=(
            "The deal's number when everyone may know it: a chosen deal's from the lobby on, a "
            "secret deal's once the race is over (the revealed seed); a daily deal's never here."
        ),
    )
    starts_at_ms: int | None = Field(default=None, description="Countdown end, Unix ms.")
    started_at_ms: int | None = None
    rematch: RematchPending | None = Field(
        default=None,
        description="Once the race is over: the rematch offer open, if any (rematch_offer).",
    )
    reconnect_to: str | None = Field(
        default=None,
        description=(
            "Only in a reply, and only when the room is held by another worker process than the "
            "one this connection reached: that worker's own address. A client may reconnect there "
            "(hello with its token, then resume) to skip a hop per request; one that ignores it "
            'loses nothing (docs/protocol.md, "Workers").'
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _ranked_unless_chosen(cls, data: Any) -> Any:
        """``ranked`` follows from the deal kind when the server makes the snapshot (it
        always sends it)."""
        if isinstance(data, dict) and "ranked" not in data:
            return {**data, "ranked": data.get("deal_kind") != "number"}
        return data


class Countdown(Message):
    type: Literal["countdown"] = "countdown"
    seq: int
    starts_at_ms: int = Field(description="When the race starts, Unix ms.")
    seconds: float = Field(description="The countdown's length; 0 for the daily deal.")


class RematchOffer(Message):
    """A room event, each time a rematch offer changes: it is made, accepted, declined, or a
    racer it waits for leaves the room or drops. It ends with a decline (``declined_by``), or
    once nobody is waited for with the room back in its lobby (the rematch, as a ``room``
    event)."""

    type: Literal["rematch_offer"] = "rematch_offer"
    seq: int
    accepted: list[str] = Field(description="The racers (player ids) who have accepted.")
    waiting: list[str] = Field(
        description="The racers still in the room yet to answer; empty: the rematch is on."
    )
    declined_by: str | None = Field(
        default=None,
        description=(
            "The racer who declined (or who left as the last to have accepted): the offer is over; "
            "anyone may offer again."
        ),
    )


class PileModel(Message):
    pile: str
    cards: list[str | None] = Field(description="Bottom to top; null is a face-down card.")


class ViewModel(Message):
    """A player's own view: exactly what a person at the table would see."""

    rule_set: str
    piles: list[PileModel]
    legal_moves: list[str]
    status: GameStatus
    reason: str = Field(description="Why the game ended, once it has; empty while it is on.")
    on_foundations: int
    total: int
    moves: int
    notes: list[str]


class RaceStarted(Message):
    type: Literal["race_started"] = "race_started"
    seq: int
    started_at_ms: int
    commitment: str
    deal_number: str | None = Field(
        default=None, description="Only for a chosen deal number; a secret seed waits for the end."
    )
    algorithm: int = Field(description="The deal algorithm's version (docs/deals.md).")
    rules: int = Field(
        description=(
            "The rules version the games are played under (docs/move-log.md): 2 today; a race "
            "stored before version 2 and restored after a restart keeps version 1."
        )
    )


class YourView(Message):
    """Your own board: at the start (id null), after a join into your own race (id null), and
    after a resume (the resume's id)."""

    type: Literal["view"] = "view"
    id: RequestId = None
    view: ViewModel


class MoveAccepted(Message):
    type: Literal["move_ok"] = "move_ok"
    id: RequestId = None
    move: str
    events: list[str] = Field(description="What happened, the forced steps included.")
    changed: list[PileModel] = Field(description="The piles of your view that changed.")
    legal_moves: list[str]
    status: GameStatus
    reason: str = Field(description="Why the game ended, once it has; empty while it is on.")
    on_foundations: int
    moves: int
    notes: list[str]
    seq: int | None = Field(
        default=None,
        description=(
            "The room event this move made: the `progress` sent to everyone in the room but you "
            "(this reply says the same). Count it as seen, like a room event's seq, for `resume`."
        ),
    )


class ProgressEvent(Message):
    """A racer's progress, broadcast to the room: never their cards."""

    type: Literal["progress"] = "progress"
    seq: int
    player_id: str
    on_foundations: int
    total: int
    moves: int
    status: SeatStatus


class RankEntry(Message):
    rank: int = Field(
        description=(
            "1, 2, 3...; racers who did not win with equal cards home reached at the same "
            "millisecond share a rank (1, 1, 3), listed in seat order."
        )
    )
    player_id: str
    name: str
    status: FinalStatus
    time_ms: int | None = Field(
        description=(
            "From the start to when the racer finished, whatever the status: for a winner the "
            "winning time, for anyone else when they lost, resigned, ran out of time or were given "
            "up for gone."
        )
    )
    on_foundations: int = Field(description="The most cards the racer had home.")
    reached_at_ms: int | None = Field(
        description=(
            "When that count was first reached, from the start; null if no move of the racer's "
            "ever showed a card home."
        )
    )
    moves: int
    rating: RatingChange | None = Field(
        default=None,
        description=(
            "The racer's rating in this rule set before and after the race (wire/ratings.py); "
            "null when the race is not rated: a chosen or daily deal, or fewer than two racers."
        ),
    )
    bot: bool = Field(
        default=False,
        description="The racer is a bot account (Hello.bot): a race with a bot rates nobody.",
    )


class RaceFinished(Message):
    type: Literal["race_finished"] = "race_finished"
    seq: int
    race_id: str
    seed: str | None = Field(
        description=(
            "The seed, revealed: SHA-256 of its decimal text is the commitment. Null for a daily "
            "deal until its day is over."
        )
    )
    algorithm: int
    rules: int = Field(description="The rules version the games were played under.")
    ranking: list[RankEntry]


class Resynced(Message):
    """The reply to resume: the room events missed since last_seq, or a full resync."""

    type: Literal["resumed"] = "resumed"
    id: RequestId = None
    missed: list[dict[str, Any]] = Field(
        description=(
            "Not full: the room events after last_seq, in seq order, of the room snapshots among "
            "them only the latest (so their seqs are skipped). Full: the room as it is now, then "
            "race_finished if the race is over."
        )
    )
    full: bool = Field(
        description=(
            "True when the events could not be given (last_seq 0, a server restart, or more missed "
            "than the room keeps)."
        )
    )
    reconnect_to: str | None = Field(
        default=None,
        description=(
            "Only in a reply, and only when the room is held by another worker process than the "
            "one this connection reached: that worker's own address. A client may reconnect there "
            "(hello with its token, then resume) to skip a hop per request; one that ignores it "
            'loses nothing (docs/protocol.md, "Workers").'
        ),
    )


class LeaderboardEntry(Message):
    """A line of a board: a racer's result in one race, or (most_wins) a player's win count."""

    rank: int = Field(description="Equal results share a rank (1, 2, 2, 4).")
    player_id: str
    name: str
    race_id: str | None = None
    status: FinalStatus | None = None
    time_ms: int | None = Field(
        default=None,
        description=("As in a race's ranking: the winning time, or when the racer finished."),
    )
    on_foundations: int | None = None
    wins: int | None = Field(default=None, description="most_wins only: the player's wins.")
    deal: str | None = Field(
        default=None,
        description=(
            "The deal number the race was dealt from: the chosen number, or for a secret deal its "
            "seed, revealed; null while a daily deal's day is not over."
        ),
    )
    at: str = Field(description="When the result (or the last win) was, ISO 8601 UTC.")
    bot: bool = Field(default=False, description="The player is a bot account (Hello.bot).")


class Leaderboard(Message):
    type: Literal["leaderboard"] = "leaderboard"
    id: RequestId = None
    rule_set: str
    board: str = Field(
        description=(
            "fastest and most_wins count ranked races only: secret deals, and daily deals of "
            "identities made before that day; daily counts the day's ranked plays; deal counts "
            "every race on the deal, chosen deals included."
        )
    )
    counts: str = Field(
        default="", description=("Which races this board counts, in a sentence for a person.")
    )
    period: str
    day: str | None = None
    deal: str | None = None
    entries: list[LeaderboardEntry]
    me: LeaderboardEntry | None = Field(
        default=None, description="With around_me: your own best line on this board."
    )


class RaceRecord(Message):
    type: Literal["race_record"] = "race_record"
    id: RequestId = None
    record: dict[str, Any] = Field(description="Players, results, seed and move logs.")


class HintGiven(Message):
    """The reply to hint: the solver's answer for your position after ``after_moves`` moves
    (if you have moved since, it is about a position you have left)."""

    type: Literal["hint"] = "hint"
    id: RequestId = None
    after_moves: int = Field(description="Your moves made when the hint was asked for.")
    result: Literal["won", "lost", "unknown"] = Field(
        description=(
            "won: a winning line was found and ``move`` is its first move; lost: no win is "
            "possible from here any more (proved); unknown: the search's time ran out."
        )
    )
    move: str | None = Field(description="A move you can legally make now (docs/moves.md).")
    moves_to_win: int | None = Field(description="The winning line's length from here.")
    message: str = Field(description="The answer, as a sentence for a person.")
    knowledge: str = Field(
        description=(
            "What the answer assumes: the solver sees the face-down and undealt cards, so a win "
            "is an upper bound for a player who cannot."
        )
    )


class LiveVerdictGiven(Message):
    """After ``live_verdict``: the solver's word on your position after ``after_moves`` moves,
    said once searched, for your newest position only (a move made meanwhile supersedes the
    search of the one before). It names no move and no card."""

    type: Literal["live_verdict"] = "live_verdict"
    after_moves: int = Field(description="Your moves made before the position it is about.")
    result: Literal["won", "lost", "unknown"] = Field(
        description=(
            "won: a win is still possible; lost: no win is possible from here any more (proved); "
            "unknown: the search's time ran out, or the solver was too busy to search it."
        )
    )
    message: Literal["still winnable", "no win is possible from here any more", "unknown"] = Field(
        description="The answer in words, as a player is shown it."
    )
    knowledge: str = Field(
        description=(
            "What the answer assumes: the solver sees the face-down and undealt cards, so a win "
            "is an upper bound for a player who cannot."
        )
    )


class Queued(Message):
    """The reply to ``quick_race``: the player waits in the queue."""

    type: Literal["queued"] = "queued"
    id: RequestId = None
    rule_set: str
    rated: bool
    waiting: int = Field(description="Players waiting in this queue now, you included.")
    window: int | None = Field(
        description=(
            "The difference of shown rating accepted now, either way; none in the unrated "
            "queue, and once anyone is accepted (after a minute)."
        )
    )


class QueueStatus(Message):
    """Sent to each player waiting in the queue at every wave (every 2 seconds)."""

    type: Literal["queue"] = "queue"
    rule_set: str
    rated: bool
    waiting: int = Field(description="Players waiting in this queue now, you included.")
    window: int | None = Field(description="As in ``queued``, for the wait so far.")
    waited_s: int = Field(description="Seconds since the player asked.")


class Matched(Message):
    """The queue matched the player: a quick room was opened for those matched, and the
    player is joined into it. The ``room`` message follows (and ``view`` once racing), exactly
    as after a ``join``."""

    type: Literal["matched"] = "matched"
    rule_set: str
    rated: bool
    code: str = Field(description="The quick room's code (never listed; only these may sit).")
    racers: int = Field(description="How many players were matched into the room.")
    practice: bool = Field(
        default=False,
        description="Nobody was found in time: the room is unrated, against the practice bot.",
    )


class ShuttingDown(Message):
    """The server is stopping: everything accepted is saved; reconnect and resume later. The
    connection is then closed with code 1001 (going away)."""

    type: Literal["shutdown"] = "shutdown"
    message: str


ServerMessage = Annotated[
    Welcome
    | Ok
    | ErrorMessage
    | RoomState
    | Countdown
    | RaceStarted
    | YourView
    | MoveAccepted
    | ProgressEvent
    | RaceFinished
    | RematchOffer
    | Resynced
    | Leaderboard
    | RaceRecord
    | HintGiven
    | LiveVerdictGiven
    | Queued
    | QueueStatus
    | Matched
    | ShuttingDown,
    Field(discriminator="type"),
]
SERVER_MESSAGE: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)
