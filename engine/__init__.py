"""Pure rules for the patience-race games: deal, legal moves, apply and undo, views, outcome,
positions, replay.

Imports only the standard library; no asyncio, no database (tests/engine/test_purity.py).
"""
