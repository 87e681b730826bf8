"""Players: their ids, their secret tokens (stored only hashed), and whether they are bots."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import UTC, datetime

from sqlalchemy import select, update

from server.storage.engine import Sessions
from server.storage.models import PlayerRow


def new_id() -> str:
    """A random URL-safe id of 16 characters (96 bits), for players and races."""
    return secrets.token_urlsafe(12)


ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a player or race id may look like (they are 16 URL-safe characters): anything else names
nobody and no race, and is answered without a database query (PostgreSQL refuses a NUL in text,
for one)."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


async def create_player(sessions: Sessions, name: str, bot: bool = False) -> tuple[PlayerRow, str]:
    """A new player and their secret token, which is returned once and stored only hashed;
    ``bot``: a bot account (``Hello.bot``)."""
    token = secrets.token_urlsafe(32)
    player = PlayerRow(
        id=new_id(),
        name=name,
        token_hash=token_hash(token),
        created_at=datetime.now(UTC),
        bot=bot,
    )
    async with sessions.begin() as session:
        session.add(player)
    return player, token


async def player_by_token(sessions: Sessions, token: str) -> PlayerRow | None:
    async with sessions.begin() as session:
        return await session.scalar(
            select(PlayerRow).where(PlayerRow.token_hash == token_hash(token))
        )


async def mark_bot(sessions: Sessions, player_id: str) -> None:
    """Make the player a bot account, for ever: nothing clears it (a program that once said
    it plays by itself cannot make its account a person's again, and be rated)."""
    async with sessions.begin() as session:
        await session.execute(update(PlayerRow).where(PlayerRow.id == player_id).values(bot=True))
