"""The request queue: a FIFO of Q_DEPTH commands (spec tma.md TMA-F1, F2, TMA-C4; seed ¶85).

``cmd.ready`` is high whenever an entry is free; commands leave strictly in acceptance order. The
descriptor cache looks at the head (setup) and at the entry behind it (look-ahead, TMA-F6).
"""

from collections import deque

__all__ = ["ReqQueue", "QueueFull"]


class QueueFull(RuntimeError):
    """A push with ``ready`` low (a testbench or model bug: the handshake cannot happen)."""


class ReqQueue:
    def __init__(self, depth):
        if not isinstance(depth, int) or depth < 1:
            raise ValueError(f"Q_DEPTH must be a positive integer, got {depth!r}")
        self.depth = depth
        self._q = deque()
        self.accepted = 0

    @property
    def ready(self):
        """``cmd.ready`` (TMA-F2)."""
        return len(self._q) < self.depth

    def push(self, cmd):
        """A ``cmd`` handshake; returns the command's acceptance index."""
        if not self.ready:
            raise QueueFull(f"request queue full ({self.depth} entries)")
        self._q.append(cmd)
        self.accepted += 1
        return self.accepted - 1

    def pop(self):
        """The head command (it moves to setup)."""
        return self._q.popleft()

    def peek(self, k=0):
        """Entry ``k`` behind the head (0 = head, 1 = the look-ahead entry), or None."""
        return self._q[k] if k < len(self._q) else None

    def __len__(self):
        return len(self._q)
