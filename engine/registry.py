"""The rule sets by name: ``find_rule_set("octagon")`` gives the ``Game`` subclass.

Modules are imported on first use, so a caller that plays one rule set loads only that one.
"""

from __future__ import annotations

from importlib import import_module

from engine.errors import UnknownRuleSetError
from engine.game import Game

_MODULES = {
    "four-corners": ("engine.rulesets.four_corners", "FourCorners"),
    "cornerstones": ("engine.rulesets.cornerstones", "Cornerstones"),
    "cornerstones-arnold": ("engine.rulesets.cornerstones", "CornerstonesArnold"),
    "puss-in-the-corner": ("engine.rulesets.puss_in_the_corner", "PussInTheCorner"),
    "hidden-cards": ("engine.rulesets.hidden_cards", "HiddenCards"),
    "all-fours": ("engine.rulesets.all_fours", "AllFours"),
    "octagon": ("engine.rulesets.octagon", "Octagon"),
}

RULE_SET_NAMES: tuple[str, ...] = tuple(_MODULES)


def find_rule_set(name: str) -> type[Game]:
    try:
        module, class_name = _MODULES[name]
    except KeyError:
        raise UnknownRuleSetError(
            f"no rule set named {name!r}; choose one of {', '.join(_MODULES)}"
        ) from None
    game: type[Game] = getattr(import_module(module), class_name)
    return game


def all_rule_sets() -> list[type[Game]]:
    return [find_rule_set(name) for name in _MODULES]
