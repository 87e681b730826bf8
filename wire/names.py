"""A player's name, as the server takes it: what may be in it, and how it is stored and shown.

Names are shown to other players as plain text only (every client draws them as text); these
rules keep out what would break, hide or reorder the text around a name even then.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

NAME_LIMIT = 32
JOINERS = frozenset("\u200c\u200d")
"""Zero-width non-joiner and joiner: the only format characters a name may hold, as they are part
of how Persian or Indic names and emoji sequences are written."""
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Hangul fillers and the blank Braille pattern: letters and symbols that draw nothing."""


def player_name(value: object) -> object:
    """A new player's name, normalised to NFC and trimmed; refused if it holds a character that
    breaks, hides or reorders text (controls, line breaks, format characters such as
    bidirectional overrides and zero-width spaces, lone surrogates) or nothing visible.
    The length limit is then counted on the result. Anything not a text is left to the type."""
    if not isinstance(value, str):
        return value
    for char in value:
        category = unicodedata.category(char)
        if category in ("Cc", "Zl", "Zp"):
            raise PydanticCustomError(
                "name_control",
                "a name may not hold control characters or line breaks ({char})",
                {"char": f"U+{ord(char):04X}"},
            )
        if category in ("Cf", "Cs") and char not in JOINERS:
            raise PydanticCustomError(
                "name_format",
                "a name may not hold invisible format characters, such as "
                "bidirectional overrides or zero-width spaces ({char})",
                {"char": f"U+{ord(char):04X}"},
            )
    name = unicodedata.normalize("NFC", value).strip()
    if all(char.isspace() or char in JOINERS or char in BLANK_LETTERS for char in name):
        raise PydanticCustomError("name_blank", "a name needs a visible character")
    return name


PlayerName = Annotated[
    str, Field(min_length=1, max_length=NAME_LIMIT), BeforeValidator(player_name)
]
"""The constraints apply to what ``player_name`` returns."""
NAME_RULE = (
    f"A new player's name: 1 to {NAME_LIMIT} characters, counted once normalised to NFC and "
    "trimmed, which is how it is stored and shown. Refused: control characters (Unicode category "
    "Cc), line and paragraph separators, format characters (Cf: bidirectional overrides and "
    "isolates, zero-width spaces, the BOM, tags) except the zero-width joiner and non-joiner, and "
    "a name with nothing visible."
)
