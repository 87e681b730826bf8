"""A player's view of their game as the protocol's models: piles, legal moves, progress."""

from __future__ import annotations

from engine.view import PileView, View
from wire.protocol import PileModel, ViewModel


def pile_model(pile: PileView) -> PileModel:
    return PileModel(pile=str(pile.pile), cards=pile.to_json())


def view_model(view: View) -> ViewModel:
    return ViewModel(
        rule_set=view.rule_set,
        piles=[pile_model(pile) for pile in view.piles],
        legal_moves=[str(move) for move in view.legal_moves],
        status=view.outcome.status.value,
        reason=view.outcome.reason,
        on_foundations=view.progress.on_foundations,
        total=view.progress.total,
        moves=view.progress.moves,
        notes=list(view.notes),
    )
