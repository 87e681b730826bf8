"""One module per rule set, each a ``Game`` subclass (engine/game.py); see engine/registry.py."""
