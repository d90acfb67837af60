"""Stream driver and monitor for Amaranth ``stream.Signature`` ports (cocotb 2.x).

An Amaranth stream member ``i`` appears in the generated Verilog as ``i__valid``, ``i__ready``
and ``i__payload`` (a ``StructLayout`` payload is one flat vector); ``prefix`` is that member
name. Timing convention (``tb.common.clock``): signals are driven right after a rising edge
and sampled in the ReadOnly phase of the same cycle; a transfer is ``valid & ready`` seen in
ReadOnly, and takes effect at the next rising edge.
"""

import zlib
from collections import deque
from dataclasses import dataclass

import cocotb
from cocotb.queue import Queue
from cocotb.simtime import get_sim_time
from cocotb.triggers import Event, ReadOnly, RisingEdge

from golden.common.stream import RandomGate, decode_word, encode_item
from tb.common import env
from tb.common.clock import PERIOD_NS

__all__ = ["Transfer", "StreamDriver", "StreamMonitor", "stream_signals", "read_int", "finish",
           "sim_cycle", "default_rng"]


def sim_cycle(period_ns=PERIOD_NS):
    """Rising edges of ``tb.common.clock``'s clock so far (first edge at ``period_ns / 2``).

    Sampled in the ReadOnly phase after edge k it is k: the label every class here gives the
    cycle in which it saw something.
    """
    return int((get_sim_time("ns") + period_ns / 2) // period_ns)


def read_int(handle):
    """The integer value of ``handle``, or None when it holds X or Z bits."""
    try:
        return int(handle.value)
    except ValueError:
        return None


def stream_signals(dut, prefix):
    """(valid, ready, payload) handles of stream ``prefix``; payload is None when absent."""
    def get(suffix, required=True):
        name = f"{prefix}__{suffix}"
        try:
            return getattr(dut, name)
        except AttributeError:
            if required:
                raise AttributeError(f"{dut._name} has no signal {name!r} "
                                     f"(is {prefix!r} a stream member of the top?)") from None
            return None
    return get("valid"), get("ready"), get("payload", required=False)


def default_rng(prefix, salt=""):
    """A ``random.Random`` derived from the run's seed and a name (stable across processes)."""
    return env.rng(zlib.crc32(f"{salt}:{prefix}".encode()) & 0xFFFF)


@dataclass(frozen=True)
class Transfer:
    """One transfer seen on a stream: the cycle (``sim_cycle``), the payload integer and, when
    the stream has a ``Fields`` layout, the unpacked fields."""
    cycle: int
    value: int
    fields: dict | None = None

    @property
    def item(self):
        """The payload as a testbench passes it in: the fields dict if any, else the integer."""
        return self.fields if self.fields is not None else self.value


class StreamDriver:
    """Drives the source side of a stream: ``valid`` and ``payload`` (the DUT drives ``ready``).

    Items are integers, or dicts of field values packed with ``fields``. Before presenting
    each item the driver may idle for random cycles (``gap_prob``); once ``valid`` is high it
    holds ``valid`` and ``payload`` until the transfer. While idle it puts random junk on
    ``payload`` (``junk_payload``) so a DUT that samples the payload without ``valid`` fails.
    Start it after reset.

    Parameters
    ----------
    dut : HierarchyObject
        The cocotb DUT handle.
    prefix : str
        Stream member name (``"i"`` for ``i__valid``/``i__ready``/``i__payload``).
    clk : handle
        The clock.
    fields : Fields, optional
        Payload layout for dict items.
    rng : random.Random, optional
        Randomness (default: derived from the run's seed and ``prefix``).
    gap_prob : float or gate
        Long-run probability that the driver idles in a cycle where it could present an item;
        or any object with ``next()`` returning True to present (a :class:`RandomGate`).
    burst : float
        Correlation length of the gaps (see :class:`RandomGate`).
    junk_payload : bool
        Drive random payload while ``valid`` is low.
    """

    def __init__(self, dut, prefix, clk, fields=None, rng=None, gap_prob=0.3, burst=1.0,
                 junk_payload=True):
        self.dut = dut
        self.prefix = prefix
        self.clk = clk
        self.fields = fields
        self.rng = rng if rng is not None else default_rng(prefix, "driver")
        self.valid, self.ready, self.payload = stream_signals(dut, prefix)
        if self.payload is None:
            raise AttributeError(f"{dut._name} has no signal {prefix}__payload")
        self.width = len(self.payload)
        if fields is not None and fields.width > self.width:
            raise ValueError(f"{prefix}: Fields layout is {fields.width} bits, payload only {self.width}")
        if hasattr(gap_prob, "next"):
            self.gate = gap_prob
        else:
            if not 0.0 <= gap_prob <= 1.0:
                raise ValueError(f"{prefix}: gap_prob must be in 0..1, got {gap_prob!r}")
            self.gate = RandomGate(1.0 - gap_prob, self.rng, burst)
        self.junk_payload = junk_payload
        self._queue = deque()            # (word, event or None)
        self._current = None
        self._accepted = False
        self.sent = 0                    # completed transfers
        self.transfers = []              # Transfer records, in order
        self.valid.value = 0
        self._task = cocotb.start_soon(self._run())

    def _encode(self, item):
        return encode_item(item, self.width, self.fields)

    def append(self, item):
        """Queue ``item`` for sending (returns at once)."""
        self._queue.append((self._encode(item), None))

    def extend(self, items):
        for item in items:
            self.append(item)

    async def send(self, item):
        """Queue ``item`` and return once it has been transferred."""
        done = Event()
        self._queue.append((self._encode(item), done))
        await done.wait()

    async def idle(self, timeout_cycles=100_000):
        """Return once every queued item has been transferred; AssertionError if that takes
        more than ``timeout_cycles`` cycles (a DUT that stopped accepting)."""
        for _ in range(timeout_cycles):
            if not self.busy:
                return
            await RisingEdge(self.clk)
        raise AssertionError(f"{self.prefix}: {self.count()} item(s) still not accepted after "
                             f"{timeout_cycles} cycles (ready stuck low?)")

    @property
    def busy(self):
        return bool(self._queue) or self._current is not None

    def count(self):
        """Items queued or being presented, not yet transferred."""
        return len(self._queue) + (self._current is not None)

    def stop(self):
        """Stop driving (``valid`` low) and end the background task."""
        self._task.cancel()
        self.valid.value = 0

    async def _run(self):
        while True:
            await RisingEdge(self.clk)
            if self._current is not None and self._accepted:
                word, done = self._current
                self._current = None
                self.sent += 1
                if done is not None:
                    done.set()
            if self._current is None and self._queue and self.gate.next():
                self._current = self._queue.popleft()
            if self._current is not None:
                self.payload.value = self._current[0]
                self.valid.value = 1
            else:
                self.valid.value = 0
                if self.junk_payload:
                    self.payload.value = self.rng.getrandbits(self.width)
            await ReadOnly()
            self._accepted = self._current is not None and read_int(self.ready) == 1
            if self._accepted:
                word = self._current[0]
                self.transfers.append(Transfer(sim_cycle(), word, decode_word(word, self.fields)
                                               if self.fields is not None else None))


class StreamMonitor:
    """Watches the sink side of a stream and drives its ``ready`` with random back-pressure.

    Every transfer (``valid & ready`` at a rising edge) is recorded as a :class:`Transfer` in
    :attr:`transfers`, put on a queue for :meth:`recv`, and passed to ``callback``.
    ``ready_prob = 1`` keeps ``ready`` high; ``passive = True`` leaves ``ready`` alone (to
    watch a stream someone else sinks, e.g. a DUT input).

    Parameters
    ----------
    dut, prefix, clk
        As for :class:`StreamDriver`.
    fields : Fields, optional
        Payload layout; transfers then carry the unpacked dict.
    rng : random.Random, optional
        Randomness (default: derived from the run's seed and ``prefix``).
    ready_prob : float or gate
        Long-run probability of ``ready`` high in a cycle, or an object with ``next()``.
    burst : float
        Correlation length of the back-pressure (see :class:`RandomGate`).
    callback : callable, optional
        Called with each :class:`Transfer` (in the ReadOnly phase: it must not write signals).
    passive : bool
        Do not drive ``ready``.
    """

    def __init__(self, dut, prefix, clk, fields=None, rng=None, ready_prob=0.7, burst=1.0,
                 callback=None, passive=False):
        self.dut = dut
        self.prefix = prefix
        self.clk = clk
        self.fields = fields
        self.rng = rng if rng is not None else default_rng(prefix, "monitor")
        self.valid, self.ready, self.payload = stream_signals(dut, prefix)
        self.passive = passive
        if hasattr(ready_prob, "next"):
            self.gate = ready_prob
        else:
            if not 0.0 <= ready_prob <= 1.0:
                raise ValueError(f"{prefix}: ready_prob must be in 0..1, got {ready_prob!r}")
            self.gate = RandomGate(ready_prob, self.rng, burst)
        self.callback = callback
        self.transfers = []
        self.queue = Queue()
        if not passive:
            self.ready.value = 0
        self._task = cocotb.start_soon(self._run())

    @property
    def count(self):
        return len(self.transfers)

    def items(self):
        """Payloads transferred so far (dicts when ``fields`` is set, else integers)."""
        return [t.item for t in self.transfers]

    async def recv(self):
        """The next transfer (waits for it)."""
        return await self.queue.get()

    async def wait_for(self, n, timeout_cycles=100_000):
        """Return once at least ``n`` transfers have been recorded; AssertionError after
        ``timeout_cycles`` cycles."""
        for _ in range(timeout_cycles):
            if len(self.transfers) >= n:
                return
            await RisingEdge(self.clk)
        raise AssertionError(f"{self.prefix}: {len(self.transfers)} of {n} transfers after "
                             f"{timeout_cycles} cycles")

    def set_ready_prob(self, prob, burst=1.0):
        self.gate = RandomGate(prob, self.rng, burst)

    def stop(self):
        self._task.cancel()

    async def _run(self):
        while True:
            await RisingEdge(self.clk)
            if not self.passive:
                self.ready.value = 1 if self.gate.next() else 0
            await ReadOnly()
            if read_int(self.valid) == 1 and read_int(self.ready) == 1:
                value = read_int(self.payload) if self.payload is not None else 0
                if value is None:
                    raise AssertionError(f"{self.prefix}: payload has X/Z bits during a transfer "
                                         f"in cycle {sim_cycle()}")
                transfer = Transfer(sim_cycle(), value,
                                    decode_word(value, self.fields) if self.fields is not None else None)
                self.transfers.append(transfer)
                self.queue.put_nowait(transfer)
                if self.callback is not None:
                    self.callback(transfer)


async def finish(clk, driver, scoreboards, checkers, timeout, settle=20):
    """End of a stream test: wait until ``driver`` has sent everything and every scoreboard has
    observed what it expects (at most ``timeout`` cycles each), then ``settle`` more cycles in
    which anything extra would show up; then every scoreboard must be complete and every
    protocol checker clean."""
    await driver.idle(timeout)
    for _ in range(timeout):
        if all(sb.observed >= sb.expected for sb in scoreboards):
            break
        await RisingEdge(clk)
    for _ in range(settle):
        await RisingEdge(clk)
    for sb in scoreboards:
        sb.check_done()
    for checker in checkers:
        checker.check()
