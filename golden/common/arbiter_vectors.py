"""Golden vectors of the round-robin arbiter, transcribed from the trackq specification.

TQ-GV16 (trackq.md §5): n = 4, ptr = 0 at reset. Each row is (req, advance, grant_idx or None,
ptr after the clock edge). The spec prints req with bit 3 first; the strings keep that order.
"""

__all__ = ["TQ_GV16_N", "TQ_GV16"]

TQ_GV16_N = 4

TQ_GV16 = [
    # req (bit 3 first), advance, grant_idx (None = grant 0000), ptr after
    ("1111", 1, 0, 1),
    ("1111", 1, 1, 2),
    ("0001", 1, 0, 1),
    ("1000", 1, 3, 0),
    ("0000", 1, None, 0),
    ("0110", 1, 1, 2),
    ("0110", 1, 2, 3),
    ("0011", 1, 0, 1),
    ("1111", 0, 1, 1),
    ("1111", 1, 1, 2),
]
