"""Protocol v1: every message on the wire, as pydantic models. The one source of truth.

JSON text frames. Each has a ``type``. Requests may carry an ``id`` of the client's choosing,
echoed in the reply (or in the error). Room events carry ``seq``, counting from 1 in each room,
so a client can tell whether it missed one. ``docs/protocol.schema.json`` is generated from these
models (``python -m server.schema``) and a test fails when it is stale; ``docs/protocol.md``
explains every message with an example session.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

PROTOCOL_VERSION = 1

RequestId = Annotated[str | None, Field(max_length=64,
                                        description="Chosen by the client, echoed in the reply.")]
Code = Annotated[str, Field(min_length=4, max_length=16, pattern=r"^[A-Za-z0-9]+$",
                            description="A room's join code.")]
RuleSetName = Annotated[str, Field(max_length=40, description="A name from the rule set list.")]
MoveText = Annotated[str, Field(max_length=80, description="A move's text form (docs/moves.md).")]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- client to server -------------------------------------------------------------------------


class Hello(Message):
    """First message: a new player gives a name and gets a token; a returning one gives it."""

    type: Literal["hello"]
    id: RequestId = None
    name: Annotated[str | None, Field(min_length=1, max_length=32)] = None
    token: Annotated[str | None, Field(max_length=128)] = None


class DealChoice(Message):
    kind: Literal["secret", "number", "daily"] = "secret"
    number: Annotated[str | None, Field(
        pattern=r"^[0-9]{1,20}$",
        description="For kind 'number': the deal number as a decimal string.")] = None


class CreateRoom(Message):
    type: Literal["create_room"]
    id: RequestId = None
    rule_set: RuleSetName
    deal: DealChoice = Field(default_factory=DealChoice)
    seats: Annotated[int, Field(ge=2, le=8)] = 4
    time_limit_s: Annotated[int | None, Field(ge=30, le=24 * 3600)] = None


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
    """A move's JSON object form (docs/moves.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    card: Annotated[str | None, Field(max_length=3)] = None
    from_: Annotated[str, Field(alias="from", max_length=24)]
    to: Annotated[str, Field(max_length=24)]
    count: Annotated[int, Field(ge=1, le=104)] = 1
    bottom: bool = False


class ActionObject(Message):
    action: Literal["resign", "redeal", "turn", "afresh"]


class MakeMove(Message):
    type: Literal["move"]
    id: RequestId = None
    move: MoveText | MoveObject | ActionObject = Field(
        description="The move's text (docs/moves.md) or its JSON object form.")


class Resign(Message):
    type: Literal["resign"]
    id: RequestId = None


class Resume(Message):
    """After a reconnect (and hello with the token): rejoin the room and get what was missed."""

    type: Literal["resume"]
    id: RequestId = None
    code: Code
    last_seq: Annotated[int, Field(ge=0)] = 0


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
    deal: Annotated[str | None, Field(pattern=r"^[0-9]{1,20}$",
                                      description="For board 'deal': the deal number.")] = None
    day: Annotated[str | None, Field(
        pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="For board 'daily': the UTC day; today if absent.")] = None
    around_me: bool = False
    limit: Annotated[int, Field(ge=1, le=100)] = 20

    @model_validator(mode="after")
    def _deal_board_names_its_deal(self) -> GetLeaderboard:
        if self.board == "deal" and self.deal is None:
            raise ValueError("the deal board needs the deal number in 'deal'")
        return self


class GetRace(Message):
    type: Literal["race_record"]
    id: RequestId = None
    race_id: Annotated[str, Field(max_length=64)]


ClientMessage = Annotated[
    Hello | CreateRoom | JoinRoom | Spectate | LeaveRoom | Ready | StartRace | MakeMove | Resign
    | Resume | PlayDaily | GetLeaderboard | GetRace,
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
        default=None, description="Only for a new player: keep it to come back as yourself.")


class Ok(Message):
    """The reply to a request whose effect everyone sees as a room event (ready, start, leave)."""

    type: Literal["ok"] = "ok"
    id: RequestId = None


class ErrorMessage(Message):
    type: Literal["error"] = "error"
    id: RequestId = None
    code: str = Field(description="A stable, machine-readable code (docs/protocol.md lists them).")
    message: str = Field(description="A sentence for a person.")


class SeatInfo(Message):
    player_id: str
    name: str
    ready: bool
    connected: bool
    on_foundations: int = 0
    total: int = 0
    moves: int = 0
    status: str = Field(default="waiting",
                        description="waiting, racing, won, lost, resigned or timed_out")


class RoomState(Message):
    """The room as everyone in it sees it; sent on join, and as a room event on every change."""

    type: Literal["room"] = "room"
    id: RequestId = None
    seq: int
    code: str
    rule_set: str
    deal_kind: str = Field(description=(
        "secret: a deal drawn for this race, revealed at its end; number: a deal the host "
        "chose (everyone knows its number, so anyone can compute its face-down cards); daily: "
        "today's daily deal."))
    ranked: bool = Field(default=True, description=(
        "Whether the race's results count on the fastest and most wins boards (and a daily "
        "deal's on the daily board). False for a chosen deal: practice, shown on that deal's "
        "board only. A daily deal is ranked, but a racer whose identity was made today is "
        "not ranked on today's boards (docs/protocol.md). Every result is on its deal's "
        "board."))
    phase: Literal["lobby", "countdown", "racing", "finished"]
    host: str
    seats_max: int
    time_limit_s: int | None
    seats: list[SeatInfo]
    spectators: int
    commitment: str | None = Field(
        default=None, description="SHA-256 (hex) of the seed's decimal text, from the start on.")
    starts_at_ms: int | None = Field(default=None, description="Countdown end, Unix ms.")
    started_at_ms: int | None = None

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
    starts_at_ms: int
    seconds: float


class PileModel(Message):
    pile: str
    cards: list[str | None] = Field(description="Bottom to top; null is a face-down card.")


class ViewModel(Message):
    """A player's own view: exactly what a person at the table would see."""

    rule_set: str
    piles: list[PileModel]
    legal_moves: list[str]
    status: str
    reason: str
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
        default=None, description="Only for a chosen deal number; a secret seed waits for the end.")
    algorithm: int


class YourView(Message):
    """Your own board: at the start, and after a resume."""

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
    status: str
    reason: str = Field(description="Why the game ended, once it has; empty while it is on.")
    on_foundations: int
    moves: int
    notes: list[str]


class ProgressEvent(Message):
    """A racer's progress, broadcast to the room: never their cards."""

    type: Literal["progress"] = "progress"
    seq: int
    player_id: str
    on_foundations: int
    total: int
    moves: int
    status: str


class RankEntry(Message):
    rank: int
    player_id: str
    name: str
    status: str
    time_ms: int | None = Field(description="From the start to the finish.")
    on_foundations: int
    reached_at_ms: int | None = Field(description="When that count was first reached.")
    moves: int


class RaceFinished(Message):
    type: Literal["race_finished"] = "race_finished"
    seq: int
    race_id: str
    seed: str | None = Field(description=(
        "The seed, revealed: SHA-256 of its decimal text is the commitment. Null for a daily "
        "deal until its day is over."))
    algorithm: int
    ranking: list[RankEntry]


class Resynced(Message):
    """The reply to resume: the room events missed since last_seq, or a full resync."""

    type: Literal["resumed"] = "resumed"
    id: RequestId = None
    missed: list[dict[str, Any]]
    full: bool


class LeaderboardEntry(Message):
    """A line of a board: a racer's result in one race, or (most_wins) a player's win count."""

    rank: int = Field(description="Equal results share a rank (1, 2, 2, 4).")
    player_id: str
    name: str
    race_id: str | None = None
    status: str | None = None
    time_ms: int | None = None
    on_foundations: int | None = None
    wins: int | None = None
    deal: str | None = Field(default=None,
                             description="The deal number; null while a daily deal is secret.")
    at: str = Field(description="When the result (or the last win) was, ISO 8601 UTC.")


class Leaderboard(Message):
    type: Literal["leaderboard"] = "leaderboard"
    id: RequestId = None
    rule_set: str
    board: str = Field(description=(
        "fastest and most_wins count ranked races only: secret deals, and daily deals of "
        "identities made before that day; daily counts the day's ranked plays; deal counts "
        "every race on the deal, chosen deals included."))
    counts: str = Field(default="", description=(
        "Which races this board counts, in a sentence for a person."))
    period: str
    day: str | None = None
    deal: str | None = None
    entries: list[LeaderboardEntry]
    me: LeaderboardEntry | None = Field(
        default=None, description="With around_me: your own best line on this board.")


class RaceRecord(Message):
    type: Literal["race_record"] = "race_record"
    id: RequestId = None
    record: dict[str, Any] = Field(description="Players, results, seed and move logs.")


class ShuttingDown(Message):
    """The server is stopping: everything accepted is saved; reconnect and resume later."""

    type: Literal["shutdown"] = "shutdown"
    message: str


ServerMessage = Annotated[
    Welcome | Ok | ErrorMessage | RoomState | Countdown | RaceStarted | YourView | MoveAccepted
    | ProgressEvent | RaceFinished | Resynced | Leaderboard | RaceRecord | ShuttingDown,
    Field(discriminator="type"),
]
SERVER_MESSAGE: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)
