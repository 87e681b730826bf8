"""Clients of the engine and the race server: the command line and its terminal board."""
