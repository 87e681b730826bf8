"""What the server and its clients share: the wire format and the seed commitment.

Both sides import this package and neither imports the other: a client needs ``wire`` and
``engine``, never ``server`` (``tests/clients/test_purity.py`` holds it to that).
"""
