"""The ``patience-race`` command line's client commands: they are listed in ``COMMANDS``, what
``patience-race --help`` says of them.

They need ``engine`` and ``wire`` only, never ``server``. The ``patience-race`` command itself
is ``server.commands``, which adds the server's commands (``serve``, ``db``, ``ratings``,
``leaderboards``) to these; ``python -m clients.cli`` runs the client commands alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import sys
import unicodedata
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from clients.board import draw
from clients.bot import RECONNECT_FOR_S
from clients.play import Session, terminal_width
from clients.terminal.session import DEFAULT_SERVER
from engine.deal import deal_number, parse_seed
from engine.errors import EngineError, InvalidLogError
from engine.game import Game
from engine.registry import RULE_SET_NAMES, all_rule_sets, find_rule_set
from engine.replay import MoveLog, check_claim, replay
from engine.solver import FULL_KNOWLEDGE, Budget, Effort, Result, solve
from engine.solver.compiled import uses_core
from wire.commitment import commitment

INTRODUCTION = "Race friends at classic patience (solitaire) games on the same deal, or play alone."
COMMANDS = """\
    patience-race games                          the rule sets, with titles and sources
    patience-race deal RULESET --seed N [--json] the opening as a player sees it (or everything)
    patience-race play RULESET [--seed N]        play a whole game alone in the terminal
    patience-race verify LOG.json                re-deal and replay a move log
    patience-race solve RULESET --seed N [--budget S] [--nodes N] [--json]   is the deal winnable?
    patience-race bot CODE [--strategy greedy|random] [--pace SECONDS] [-v]  a practice opponent
    patience-race race [CODE | --quick RULESET] [--server URL] [--name NAME]  race, full screen"""
"""The client commands, one a line, as ``--help`` lists them, in plain words for players."""
EPILOG = "patience-race COMMAND --help says more about a command."

INTERRUPTED = 128 + signal.SIGINT
"""The exit status after Ctrl-C, as a shell reports a command it stopped."""


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def seed_argument(text: str) -> int:
    """A deal number (ASCII digits, 0 to 2^64-1), or any other text, hashed as docs/deals.md
    says; a number out of range is refused rather than hashed."""
    try:
        return parse_seed(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def seed_values_attached(argv: Sequence[str]) -> list[str]:
    """``--seed TEXT`` as ``--seed=TEXT``: argparse takes a value that begins with ``-`` for an
    option (``-x``, ``--abc``; ``-1`` only while no option looks like a number), and a text
    seed may begin with anything."""
    attached: list[str] = []
    words = iter(argv)
    for word in words:
        value = next(words, None) if word == "--seed" else None
        attached.append(word if value is None else f"{word}={value}")
    return attached


def cmd_games(args: argparse.Namespace) -> int:
    for game in all_rule_sets():
        print(f"{game.name:22} {game.title}")
        print(f"{'':22} {game.source}; {game.packs} pack{'s' if game.packs > 1 else ''}")
    return 0


def cmd_deal(args: argparse.Namespace) -> int:
    game = find_rule_set(args.rule_set)(args.seed)
    if args.json:
        print(json.dumps(game.full_state(), indent=2))
        return 0
    print(f"{game.title}, deal {game.seed}")
    for event in game.opening_events:
        if args.verbose:
            print(f"  {event}")
    print(draw(game.view(), game.layout, use_colour(sys.stdout), terminal_width(sys.stdout)))
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else secrets.randbits(64)
    game = find_rule_set(args.rule_set)(seed)
    session = Session(
        game,
        input,
        print,
        use_colour(sys.stdout),
        live_verdict=args.verdict,
        redraw=sys.stdin.isatty() and sys.stdout.isatty(),
    )
    finished = session.run()
    path = args.log
    if path is None and finished and sys.stdin.isatty():
        try:
            path = input("Save the move log to (empty to skip): ").strip() or None
        except EOFError:
            path = None
    if path:
        MoveLog.of(game).save(path)
        print(f"move log saved to {path}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """A move log, or a race record exported by the server (GET /api/races/ID)."""
    try:
        data = json.loads(Path(args.log).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        print(f"{args.log}: cannot read {args.log}: {error}", file=sys.stderr)
        return 1
    if isinstance(data, dict) and "race_id" in data:
        return verify_race(args.log, data)
    try:
        log = MoveLog.from_json(data)
        game = replay(log)
    except EngineError as error:
        print(f"{args.log}: {error}", file=sys.stderr)
        return 1
    outcome = game.outcome()
    print(
        f"{args.log}: {game.name}, deal {game.seed} (algorithm {game.algorithm}, rules "
        f"{game.rules}), {len(log.moves)} moves replayed"
    )
    print(f"outcome: {outcome}; {game.progress()}")
    mismatch = check_claim(log, outcome)
    if mismatch:
        print(f"{args.log}: {mismatch}", file=sys.stderr)
        return 1
    return 0


CORE_WORDS = {"compiled": "compiled core (C)", "python": "Python search"}
"""How ``solve`` names the core that searched (``engine.solver.core_name``)."""


def core_of(game: Game) -> str:
    """Which core ``engine.solver.solve`` searches ``game`` with: ``compiled`` where the core
    is built and knows its rule set, else ``python``."""
    return "compiled" if uses_core(game) else "python"


SOLVE_BUDGET_S = 10.0
"""``solve``'s default budget: the issue's aim is a verdict for nearly every deal within 10 s."""


def cmd_solve(args: argparse.Namespace) -> int:
    """Search the deal with full knowledge of its hidden cards; print the verdict, the effort
    and the winning line (checked through the engine), one move per line, or all as JSON.
    Progress goes to stderr once a second while the search runs."""
    game = find_rule_set(args.rule_set)(args.seed)
    try:
        budget = Budget(args.budget, args.nodes)
    except ValueError as error:
        print(f"solve: {error}", file=sys.stderr)
        return 2

    def report(effort: Effort) -> None:
        print(f"searching {game.name} deal {game.seed}: {effort}", file=sys.stderr, flush=True)

    verdict = solve(game, budget, progress=None if args.json else report)
    core = core_of(game)
    if args.json:
        print(
            json.dumps(
                {
                    "rule_set": game.name,
                    "seed": str(game.seed),
                    "algorithm": game.algorithm,
                    "rules": game.rules,
                    "core": core,
                    **verdict.to_json(),
                },
                indent=2,
            )
        )
        return 0
    print(f"{game.title}, deal {game.seed}: {verdict.result}")
    print(f"  {FULL_KNOWLEDGE}")
    print(f"  {verdict}")
    print(f"  searched by the {CORE_WORDS[core]}")
    if verdict.result is Result.WON:
        print(f"the winning line, {len(verdict.line)} moves, each checked by the engine:")
        for move in verdict.line:
            print(move)
    return 0


RESULTS_WITHOUT_ENGINE_END = {"timed_out": {"in_progress"}, "abandoned": {"resigned"}}
"""Results the race gives that the engine's outcome does not (the clock, an empty seat)."""


def printable(text: object) -> str:
    """Text from others as a terminal may show it: control and format characters (an escape
    sequence, a line break, a bidirectional override) written as Python escapes (``\\x1b``),
    not obeyed. The joiners of emoji sequences and Persian names stay."""
    return "".join(
        char
        if char in "\u200c\u200d"
        or unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Zl", "Zp")
        else ascii(char)[1:-1]
        for char in str(text)
    )


def verify_race(name: str, record: dict[str, Any]) -> int:
    """Check a race record: the revealed seed matches the commitment published at the start,
    and every racer's log replays legally to the result the server announced."""
    if record.get("seed") is None or record.get("logs") is None:
        print(
            f"{name}: the seed is not revealed yet (a race in progress, or today's daily)",
            file=sys.stderr,
        )
        return 1
    if commitment(deal_number(str(record["seed"]))) != record["commitment"]:
        print(f"{name}: the seed does not match the commitment", file=sys.stderr)
        return 1
    print(
        f"{name}: race {printable(record['race_id'])}, {printable(record['rule_set'])}, deal "
        f"{record['seed']}: the seed matches the commitment"
    )
    failures = 0
    names = {player["player_id"]: player["name"] for player in record["players"]}
    for result in record["results"]:
        who = printable(names.get(result["player_id"], result["player_id"]))
        try:
            log = MoveLog.from_json(record["logs"][result["player_id"]])
            if (log.rule_set, str(log.seed)) != (record["rule_set"], record["seed"]):
                raise InvalidLogError("the log is for another deal")
            game = replay(log)
        except (EngineError, KeyError) as error:
            print(f"  {who}: {error}", file=sys.stderr)
            failures += 1
            continue
        status = game.outcome().status.value
        allowed = RESULTS_WITHOUT_ENGINE_END.get(result["status"], {result["status"]})
        agrees = status in allowed and game.foundation_count() == result["on_foundations"]
        print(
            f"  {result['rank']}. {who}: {len(log.moves)} moves replayed, {status}, "
            f"{game.foundation_count()} home; announced {result['status']}, "
            f"{result['on_foundations']} home: {'agrees' if agrees else 'DIFFERS'}"
        )
        failures += not agrees
    return 1 if failures else 0


def cmd_bot(args: argparse.Namespace) -> int:
    from websockets.exceptions import WebSocketException

    from clients.bot import run_bot
    from clients.sdk import RequestRefused

    try:
        result = asyncio.run(
            run_bot(
                args.server,
                args.code,
                args.name,
                args.strategy,
                args.pace,
                args.seed,
                say=partial(print, flush=True),
                verbose=args.verbose,
                reconnect_for=args.reconnect_for,
            )
        )
    except RequestRefused as refused:  # no such room, a full one, one already racing
        print(f"patience-race bot: {printable(refused.message)}", file=sys.stderr)
        return 1
    except ValidationError as invalid:  # the name, checked as the server would
        print(
            f"patience-race bot: choose another name: {invalid.errors()[0]['msg']}", file=sys.stderr
        )
        return 1
    except BrokenPipeError:
        raise  # whoever read the output has gone: main ends quietly
    except (OSError, WebSocketException) as error:  # refused, unknown host, closed, no answer
        print(f"patience-race bot: no connection to {args.server}: {error}", file=sys.stderr)
        return 1
    print(
        f"{args.name}: {words(result.status)} after {result.moves} moves, "
        f"{result.on_foundations}/{result.total} home"
    )
    for entry in result.ranking:
        print(
            f"  {entry.rank}. {printable(entry.name)}: {words(entry.status)}, "
            f"{entry.on_foundations} home"
        )
    return 0


def words(status: str) -> str:
    """``timed_out`` as a person writes it: ``timed out``."""
    return status.replace("_", " ")


def cmd_race(args: argparse.Namespace) -> int:
    from clients.terminal.app import run_racer
    from clients.terminal.session import default_token_path

    return run_racer(
        args.server, args.code, args.name, args.token_file or default_token_path(), args.quick
    )


def command_parser(
    description: str,
) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction[argparse.ArgumentParser]]:
    """The ``patience-race`` parser saying ``description`` first, and the action its commands
    are added to."""
    parser = argparse.ArgumentParser(
        prog="patience-race",
        description=description,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser, parser.add_subparsers(dest="command", required=True, metavar="COMMAND")


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The client commands (``COMMANDS``)."""
    games = commands.add_parser("games", help="list the rule sets")
    games.set_defaults(run=cmd_games)

    deal = commands.add_parser("deal", help="show a deal's opening")
    deal.add_argument("rule_set", choices=RULE_SET_NAMES, metavar="RULESET")
    deal.add_argument(
        "--seed",
        type=seed_argument,
        required=True,
        help="deal number 0..2^64-1, or any text (hashed)",
    )
    deal.add_argument(
        "--json", action="store_true", help="print the full state, hidden cards included"
    )
    deal.add_argument("--verbose", "-v", action="store_true", help="list the opening events")
    deal.set_defaults(run=cmd_deal)

    play = commands.add_parser("play", help="play a game alone in the terminal")
    play.add_argument("rule_set", choices=RULE_SET_NAMES, metavar="RULESET")
    play.add_argument("--seed", type=seed_argument, help="deal number or text; random if absent")
    play.add_argument("--log", help="save the move log to this file at the end")
    play.add_argument(
        "--no-verdict",
        dest="verdict",
        action="store_false",
        help="do not say after each move whether a win is still possible (the "
        "solver, seeing the hidden cards, searches it meanwhile)",
    )
    play.set_defaults(run=cmd_play)

    verify = commands.add_parser("verify", help="re-deal and replay a move log")
    verify.add_argument("log", metavar="LOG.json")
    verify.set_defaults(run=cmd_verify)

    solver = commands.add_parser(
        "solve", help="is a deal winnable? search it, seeing its hidden cards"
    )
    solver.add_argument("rule_set", choices=RULE_SET_NAMES, metavar="RULESET")
    solver.add_argument(
        "--seed",
        type=seed_argument,
        required=True,
        help="deal number 0..2^64-1, or any text (hashed)",
    )
    solver.add_argument(
        "--budget",
        type=float,
        default=SOLVE_BUDGET_S,
        metavar="SECONDS",
        help=f"give up (unknown) after this long (default {SOLVE_BUDGET_S:g})",
    )
    solver.add_argument(
        "--nodes", type=int, metavar="N", help="give up (unknown) after searching N positions"
    )
    solver.add_argument(
        "--json",
        action="store_true",
        help="print the verdict, effort and line as JSON (no progress)",
    )
    solver.set_defaults(run=cmd_solve)

    bot = commands.add_parser(
        "bot", help="join a room and play it with a simple strategy, as a bot (never rated)"
    )
    bot.add_argument("code", metavar="CODE", help="the room's code")
    bot.add_argument("--strategy", choices=["greedy", "random"], default="greedy")
    bot.add_argument("--pace", type=float, default=1.0, help="seconds between moves (default 1)")
    bot.add_argument("--name", default="Bot", help="the bot's display name")
    bot.add_argument("--server", default=DEFAULT_SERVER, help="the server's URL")
    bot.add_argument("--seed", type=int, help="seed of the bot's own choices (repeatable play)")
    bot.add_argument("--verbose", "-v", action="store_true", help="print every move it makes")
    bot.add_argument(
        "--reconnect-for",
        type=float,
        default=RECONNECT_FOR_S,
        metavar="SECONDS",
        help="how long to keep trying to reconnect when the connection drops "
        f"(default {RECONNECT_FOR_S:g})",
    )
    bot.set_defaults(run=cmd_bot)

    race = commands.add_parser("race", help="race in the terminal: create or join a room")
    race.add_argument("code", nargs="?", metavar="CODE", help="join this room at once")
    race.add_argument(
        "--quick",
        choices=RULE_SET_NAMES,
        metavar="RULESET",
        help="wait in that rule set's quick race queue, and race whoever it matches you with",
    )
    race.add_argument("--server", default=DEFAULT_SERVER, help="the server's URL")
    race.add_argument(
        "--name",
        help="your name: a new player the first time, then that player again (the token is kept)",
    )
    race.add_argument(
        "--token-file",
        type=Path,
        help="where your token is kept (default: "
        "$XDG_CONFIG_HOME/patience-race/token.json or ~/.config/...)",
    )
    race.set_defaults(run=cmd_race)


def build_parser() -> argparse.ArgumentParser:
    parser, commands = command_parser(f"{INTRODUCTION}\n\n{COMMANDS}")
    add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one client command (``build_parser``)."""
    return run(build_parser(), argv)


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Run the command ``parser`` reads from ``argv`` (else the command line). When whoever
    reads the output stops early (``patience-race games | head -1``), the command ends quietly
    with status 1, as Python's documentation advises (the signal module, "Note on SIGPIPE"): 1
    because the output was cut short, as a tool stopped by SIGPIPE does not end with 0 either.
    Ctrl-C that no command handles itself ends it quietly too, with the shell's status for it
    (128 + SIGINT)."""
    try:
        args = parser.parse_args(seed_values_attached(sys.argv[1:] if argv is None else argv))
        result: int = args.run(args)
        sys.stdout.flush()  # output held in the buffer (stdout is a pipe) is written here
    except KeyboardInterrupt:
        print(file=sys.stderr)  # the terminal's ^C ends a line
        return INTERRUPTED
    except BrokenPipeError:
        # Nothing more can be written; pointing stdout at devnull keeps the interpreter's own
        # flush at exit from failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return result


if __name__ == "__main__":
    sys.exit(main())
