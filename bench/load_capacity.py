"""The capacity search and the hop measurement of bench/load.py (modes ``capacity``, ``hop``).

``capacity``: the open loop (one move every ``--pace`` s per racer) at growing racer counts,
``--capacity-steps``, for each of our servers (``--ours``, e.g. one process, and two workers
with Redis), their order rotating at each step; a server drops out at the first count where
its p99 acknowledgement reaches ``--p99-target-ms`` (or bots fail to set up). The largest
count held is its capacity; capacities are compared with the first server's, in the same run.

``hop``: the open loop at ``--hop-racers`` against our first server with several workers,
each bot connected to one worker's own address. Rounds alternate two seatings (see
bench/load_bots.py): ``local``, every room's racers on the room's worker, and ``mixed``, racers
seated regardless of their worker, so that a joiner on the other worker sends its moves through
Redis. The cost of a hop: the latency of hopping moves against the others, and the server CPU
per move of ``mixed`` over ``local``, divided by the share of moves that hopped.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench.load_results import RoundResult, median_of, number, percentile
from bench.load_round import run_round

if TYPE_CHECKING:
    from bench.load import Config


@dataclass
class Step:
    passed: int
    racers: int
    result: RoundResult
    held: bool


async def run_capacity(config: Config, workdir: Path) -> list[str]:
    steps: list[Step] = []
    capacity: dict[str, list[int]] = {spec.label: [] for spec in config.servers}
    serial = 0
    for passed in range(1, config.rounds + 1):
        going, best = list(config.servers), {spec.label: 0 for spec in config.servers}
        for index, racers in enumerate(config.capacity_steps):
            shift = (index + passed) % len(going)
            for spec in going[shift:] + going[:shift]:
                serial += 1
                print(f"[capacity pass {passed}] {spec.label}: {racers} racers", file=sys.stderr)
                result = await run_round("capacity", spec, serial, config, workdir, racers)
                held = (
                    result.latency(0.99) < config.p99_target_ms
                    and result.acks > 0
                    and not result.failed
                )
                print(
                    f"    p99 {result.latency(0.99):.1f} ms, {result.acks_per_s:,.0f} acks/s, "
                    f"server CPU {result.server_cpu_s / result.window_s:.0%}, generator CPU "
                    f"{result.generator_cpu_s / result.window_s:.0%}, failed bots "
                    f"{result.failed}: {'held' if held else 'not held'}",
                    file=sys.stderr,
                )
                steps.append(Step(passed, racers, result, held))
                if held:
                    best[spec.label] = racers
                else:
                    going.remove(spec)
            if not going:
                break
        for label, racers in best.items():
            capacity[label].append(racers)
    return capacity_table(config, steps, capacity)


def capacity_table(config: Config, steps: list[Step], capacity: dict[str, list[int]]) -> list[str]:
    lines = [
        f"## Capacity: racers held at p99 < {config.p99_target_ms:g} ms, one move every "
        f"{config.pace_s:g} s each",
        "",
        f"Steps {', '.join(map(str, config.capacity_steps))} racers; warm-up "
        f"{config.warmup_s:g} s and window {config.window_s:g} s per step; a server drops "
        "out at its first step not held. CPU: 100% = one core.",
        "",
        "| pass | racers | server | acks/s | p50 ms | p99 ms | server CPU | CPU us/ack | "
        "generator CPU | generator us/ack | other CPU | failed bots | held |",
        "| ---: | ---: | --- |" + " ---: |" * 9 + " --- |",
    ]
    for step in steps:
        result = step.result
        generator_us = result.generator_cpu_s / result.acks * 1e6 if result.acks else math.nan
        lines.append(
            f"| {step.passed} | {step.racers} | {result.server} | {number(result.acks_per_s)} | "
            f"{number(result.latency(0.5), 2)} | {number(result.latency(0.99), 2)} | "
            f"{result.server_cpu_s / result.window_s:.0%} | {number(result.cpu_per_ack_us)} | "
            f"{result.generator_cpu_s / result.window_s:.0%} | {number(generator_us)} | "
            f"{result.other_cpu_s / result.window_s:.0%} | {result.failed} | "
            f"{'yes' if step.held else 'no'} |"
        )
    first = config.servers[0].label
    lines += [
        "",
        "| server | racers held, by pass | median | / " + first + " |",
        "| --- | --- | ---: | ---: |",
    ]
    for label, held in capacity.items():
        median = median_of([float(value) for value in held])
        base = median_of([float(value) for value in capacity[first]])
        lines.append(
            f"| {label} | {', '.join(map(str, held))} | {median:,.0f} | "
            f"{number(median / base if base else math.nan, 2)} |"
        )
    return [*lines, ""]


async def run_hop(config: Config, workdir: Path) -> list[str]:
    spec = next((spec for spec in config.servers if spec.workers > 1), None)
    if spec is None:
        raise SystemExit("hop mode needs one of --ours with workers=2 or more (and --redis-url)")
    rounds: list[dict[str, RoundResult]] = []
    for number_ in range(1, config.rounds + 1):
        order = ("local", "mixed") if number_ % 2 else ("mixed", "local")
        results = {}
        for seating in order:
            print(
                f"[hop {number_}/{config.rounds}] {spec.label}, {seating}: "
                f"{config.hop_racers} racers",
                file=sys.stderr,
            )
            result = await run_round(
                "hop",
                spec,
                number_ * 2 + (seating == "mixed"),
                config,
                workdir,
                config.hop_racers,
                hop=seating,
            )
            print(
                f"    {result.acks_per_s:,.0f} acks/s, {len(result.hop_latencies_ms)} hops, "
                f"p99 {result.latency(0.99):.1f} ms, {result.cpu_per_ack_us:.0f} us/ack",
                file=sys.stderr,
            )
            results[seating] = result
        rounds.append(results)
    return hop_table(config, spec.label, rounds)


def _split(result: RoundResult) -> tuple[list[float], list[float]]:
    """Sorted latencies of the moves that hopped, and of those that did not."""
    hops = sorted(result.hop_latencies_ms)
    others = sorted((Counter(result.latencies_ms) - Counter(hops)).elements())
    return hops, others


def hop_table(config: Config, label: str, rounds: list[dict[str, RoundResult]]) -> list[str]:
    lines = [
        f"## The cost of a hop: {label}, {config.hop_racers} racers at one move every "
        f"{config.pace_s:g} s, each on one worker's own address",
        "",
        "local: every room's racers on its worker; mixed: seated regardless, so a joiner "
        "on the other worker sends its moves through Redis. Latencies in ms; CPU of the "
        "supervisor and workers (Redis's own CPU is in 'other').",
        "",
        "| round | seating | acks/s | share of moves hopping | p50 no hop | p99 no hop | "
        "p50 hop | p99 hop | server CPU | CPU us/ack | generator CPU | other CPU | "
        "bot errors |",
        "| ---: | --- |" + " ---: |" * 11,
    ]
    extra_us, p50_extra, p99_extra = [], [], []
    for results in rounds:
        for seating, result in results.items():
            hops, others = _split(result)
            share = len(hops) / result.acks if result.acks else math.nan
            lines.append(
                f"| {result.round // 2} | {seating} | {number(result.acks_per_s)} | "
                f"{share:.0%} | {number(percentile(others, 0.5), 2)} | "
                f"{number(percentile(others, 0.99), 2)} | {number(percentile(hops, 0.5), 2)} | "
                f"{number(percentile(hops, 0.99), 2)} | "
                f"{result.server_cpu_s / result.window_s:.0%} | "
                f"{number(result.cpu_per_ack_us)} | "
                f"{result.generator_cpu_s / result.window_s:.0%} | "
                f"{result.other_cpu_s / result.window_s:.0%} | {result.errors} |"
            )
        local, mixed = results["local"], results["mixed"]
        hops, others = _split(mixed)
        share = len(hops) / mixed.acks if mixed.acks else 0
        if share:
            extra_us.append((mixed.cpu_per_ack_us - local.cpu_per_ack_us) / share)
            p50_extra.append(percentile(hops, 0.5) - percentile(others, 0.5))
            p99_extra.append(percentile(hops, 0.99) - percentile(others, 0.99))
    lines += [
        "",
        "Per round, medians over the rounds:",
        "",
        f"- server CPU a hopping move costs more than one that does not: "
        f"{number(median_of(extra_us))} us (rounds: "
        f"{', '.join(number(value) for value in extra_us)})",
        "- p50 latency, hopping minus not (mixed seating): "
        f"{number(median_of(p50_extra), 2)} ms; p99: "
        f"{number(median_of(p99_extra), 2)} ms",
        "",
    ]
    return lines
