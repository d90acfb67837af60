"""Transaction-level helpers for streams: pass-through golden model, random on/off patterns,
payload encoding and the latency/reorder scheduler of the memory models.

Pure Python (no amaranth, no cocotb) so that the testbench library's decisions can be checked
in ``tests/golden`` without a simulator. The cocotb classes in ``tb/common`` are thin drivers
around these.
"""

import operator
import random

__all__ = ["pass_through", "encode_item", "decode_word", "RandomGate", "ResponseScheduler"]


def pass_through(items):
    """Golden model of a pure pass-through stream element (skid buffer, register slice, FIFO).

    The output sequence equals the input sequence: same payloads, same order, nothing dropped
    or added. Returns the expected output as a list.
    """
    return list(items)


def encode_item(item, width, fields=None):
    """The payload integer for ``item`` on a ``width``-bit stream.

    ``item`` is an integer (0 <= item < 2**width) or, when ``fields`` (a
    :class:`golden.common.fields.Fields`) is given, a dict of field values packed with it.
    Raises ValueError for anything that does not fit.
    """
    if isinstance(item, dict):
        if fields is None:
            raise ValueError(f"dict payload {item!r} needs a Fields layout to be packed")
        if fields.width > width:
            raise ValueError(f"Fields layout is {fields.width} bits wide, the stream only {width}")
        return fields.pack(**item)
    try:
        word = operator.index(item)      # int, bool, numpy integers; not float or str
    except TypeError:
        raise ValueError(f"payload {item!r} is neither an integer nor a dict") from None
    if not 0 <= word < (1 << width):
        raise ValueError(f"payload {word:#x} does not fit in {width} bits")
    return word


def decode_word(word, fields=None):
    """The inverse of :func:`encode_item`: a dict when ``fields`` is given, else the integer."""
    return fields.unpack(word) if fields is not None else int(word)


class RandomGate:
    """A random on/off sequence with long-run probability ``prob`` of "on".

    Used for valid gaps (on = may present the next item) and ready back-pressure (on = ready).
    The sequence is a two-state Markov chain: from "on" it switches off with probability
    ``(1 - prob) / burst``, from "off" it switches on with probability ``prob / burst``. Its
    stationary probability of "on" is ``prob`` for every ``burst``; ``burst = 1`` makes the
    states independent (Bernoulli), larger ``burst`` makes longer runs (mean "off" run
    ``burst / prob``, mean "on" run ``burst / (1 - prob)``), which fills queues more deeply.
    ``prob = 1`` is always on, ``prob = 0`` always off.

    Parameters
    ----------
    prob : float
        Long-run fraction of "on" cycles, 0..1.
    rng : random.Random, optional
        Source of randomness (default ``random.Random(0)``).
    burst : float
        Correlation length, >= 1.
    """

    def __init__(self, prob, rng=None, burst=1.0):
        if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0.0 <= prob <= 1.0:
            raise ValueError(f"RandomGate: prob must be a number in 0..1, got {prob!r}")
        if isinstance(burst, bool) or not isinstance(burst, (int, float)) or not burst >= 1.0:
            raise ValueError(f"RandomGate: burst must be a number >= 1, got {burst!r}")
        self.prob = float(prob)
        self.burst = float(burst)
        self.rng = rng if rng is not None else random.Random(0)
        self._off_prob = (1.0 - self.prob) / self.burst
        self._on_prob = self.prob / self.burst
        self.state = self.prob >= 1.0 or (self.prob > 0.0 and self.rng.random() < self.prob)

    @classmethod
    def of(cls, spec, rng=None):
        """A gate from ``spec``: an object with ``next()`` is used as is, a number is ``prob``."""
        if hasattr(spec, "next"):
            return spec
        return cls(spec, rng)

    def next(self):
        """The next state (True = on)."""
        current = self.state
        if current:
            if self._off_prob > 0.0 and self.rng.random() < self._off_prob:
                self.state = False
        else:
            if self._on_prob > 0.0 and self.rng.random() < self._on_prob:
                self.state = True
        return current

    def take(self, n):
        """The next ``n`` states as a list."""
        return [self.next() for _ in range(n)]

    def __repr__(self):
        return f"RandomGate(prob={self.prob}, burst={self.burst})"


class ResponseScheduler:
    """When, and in which order, a memory model returns its responses.

    ``push(time, item)`` schedules ``item`` (accepted at clock edge ``time``) to become due at
    edge ``time + L`` with L drawn uniformly from ``min_latency..max_latency``. ``pop(time)``
    removes and returns one item that is due at edge ``time`` (or None):

    ``"in_order"``
        the oldest item, and only once it is due: responses in acceptance order, each no
        earlier than its own latency and no earlier than the one before it.
    ``"by_latency"``
        the due item with the earliest due time (oldest first among equals): responses
        overtake each other only because their latencies differ.
    ``"random"``
        a random choice among all due items: the most reordering.

    Parameters
    ----------
    min_latency, max_latency : int
        Latency bounds in clock edges, 1 <= min_latency <= max_latency.
    order : str
        One of :attr:`ORDERS`.
    rng : random.Random, optional
        Source of randomness (default ``random.Random(0)``).
    """

    ORDERS = ("in_order", "by_latency", "random")

    def __init__(self, min_latency=1, max_latency=1, order="random", rng=None):
        for name, value in (("min_latency", min_latency), ("max_latency", max_latency)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ResponseScheduler: {name} must be an integer >= 1, got {value!r}")
        if max_latency < min_latency:
            raise ValueError(f"ResponseScheduler: max_latency ({max_latency}) must be >= "
                             f"min_latency ({min_latency})")
        if order not in self.ORDERS:
            raise ValueError(f"ResponseScheduler: order must be one of {', '.join(self.ORDERS)}, "
                             f"got {order!r}")
        self.min_latency = min_latency
        self.max_latency = max_latency
        self.order = order
        self.rng = rng if rng is not None else random.Random(0)
        self._entries = []          # [due, seq, item], in push order
        self._seq = 0

    def push(self, time, item):
        """Schedule ``item`` accepted at edge ``time``; returns its due edge."""
        due = time + self.rng.randint(self.min_latency, self.max_latency)
        self._entries.append([due, self._seq, item])
        self._seq += 1
        return due

    def pop(self, time):
        """Remove and return an item due at edge ``time`` according to ``order``, or None."""
        if not self._entries:
            return None
        if self.order == "in_order":
            index = 0 if self._entries[0][0] <= time else None
        else:
            due = [i for i, entry in enumerate(self._entries) if entry[0] <= time]
            if not due:
                index = None
            elif self.order == "random":
                index = self.rng.choice(due)
            else:
                index = min(due, key=lambda i: (self._entries[i][0], self._entries[i][1]))
        if index is None:
            return None
        return self._entries.pop(index)[2]

    def next_due(self):
        """The earliest due edge of any pending item, or None."""
        return min((entry[0] for entry in self._entries), default=None)

    def __len__(self):
        return len(self._entries)

    def __bool__(self):
        return bool(self._entries)

    def items(self):
        """Pending items in push order (for diagnostics)."""
        return [entry[2] for entry in self._entries]
