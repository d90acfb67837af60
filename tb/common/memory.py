"""Memory model for testbenches: sparse byte memory behind a request and a response stream,
with random latency, out-of-order responses, an outstanding-request limit and back-pressure.

Three layers, the first two pure Python (tested in ``tests/golden`` without a simulator):

* :class:`SparseMemory` — byte-addressed sparse storage (numpy pages).
* :class:`MemoryCore` — the cycle behaviour: what the model drives after each clock edge,
  given what transferred at that edge. Scheduling uses
  :class:`golden.common.stream.ResponseScheduler`.
* :class:`MemoryModel` — binds a core to a DUT's request and response stream signals.

Semantics: a request takes effect when it is accepted (writes update memory, reads capture
their data then), so memory contents follow request-accept order however the responses are
reordered. Latency L means the response can transfer at the L-th clock edge after the request's.
"""

import random

import numpy as np

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import RandomGate, ResponseScheduler
from tb.common.stream import default_rng, read_int, sim_cycle, stream_signals

__all__ = ["SparseMemory", "MemoryCore", "MemoryModel", "DEFAULT_NAMES"]


class SparseMemory:
    """Byte-addressed sparse memory: 4 KiB numpy pages created on first write.

    Unwritten bytes read as ``fill``. Multi-byte integers are little-endian (byte k of a word
    is bits 8k..8k+7, at address ``addr + k``).

    Parameters
    ----------
    size : int, optional
        Address space size in bytes; accesses beyond it raise ValueError (default unbounded).
    fill : int
        Value of never-written bytes.
    """

    PAGE = 4096

    def __init__(self, size=None, fill=0):
        self.size = size
        self.fill = fill
        self.pages = {}

    def _check(self, addr, length):
        if addr < 0 or (self.size is not None and addr + length > self.size):
            raise ValueError(f"memory access {addr:#x}+{length} outside 0..{self.size:#x}"
                             if self.size is not None else f"negative memory address {addr:#x}")

    def read(self, addr, length):
        """``length`` bytes from ``addr``."""
        self._check(addr, length)
        out = bytearray()
        while length > 0:
            page, offset = divmod(addr, self.PAGE)
            n = min(length, self.PAGE - offset)
            data = self.pages.get(page)
            out += bytes([self.fill]) * n if data is None else data[offset:offset + n].tobytes()
            addr += n
            length -= n
        return bytes(out)

    def write(self, addr, data, mask=None):
        """Write ``data`` at ``addr``; ``mask`` (int, bit k for byte k, or a bool sequence) selects bytes."""
        data = bytes(data)
        self._check(addr, len(data))
        if mask is None:
            enables = np.ones(len(data), dtype=bool)
        elif isinstance(mask, (int, np.integer)):
            enables = np.array([(int(mask) >> k) & 1 for k in range(len(data))], dtype=bool)
        else:
            enables = np.asarray(mask, dtype=bool)
            if enables.shape != (len(data),):
                raise ValueError(f"mask has {enables.size} entries for {len(data)} bytes")
        src = np.frombuffer(data, dtype=np.uint8)
        pos = 0
        while pos < len(data):
            page, offset = divmod(addr + pos, self.PAGE)
            n = min(len(data) - pos, self.PAGE - offset)
            sel = enables[pos:pos + n]
            if sel.any():
                store = self.pages.get(page)
                if store is None:
                    store = self.pages[page] = np.full(self.PAGE, self.fill, dtype=np.uint8)
                view = store[offset:offset + n]
                view[sel] = src[pos:pos + n][sel]
            pos += n

    def read_int(self, addr, length):
        return int.from_bytes(self.read(addr, length), "little")

    def write_int(self, addr, value, length, mask=None):
        self.write(addr, int(value).to_bytes(length, "little"), mask)


DEFAULT_NAMES = {
    # request fields
    "addr": "addr", "tag": "tag", "write": "write", "wdata": "wdata", "be": "be",
    # response fields
    "rdata": "rdata", "resp_tag": "tag", "resp_write": "write",
}


class MemoryCore:
    """Cycle behaviour of the memory model, independent of any simulator.

    Per clock edge call :meth:`edge` with the request payload that transferred at that edge
    (or None) and whether the presented response beat transferred; then drive
    :attr:`req_ready`, :attr:`resp_valid` and :attr:`resp_payload` until the next edge.

    Request fields (names through ``names``, see :data:`DEFAULT_NAMES`): ``addr`` (required; byte
    address ``addr << addr_shift``), ``tag``, ``write`` (absent: read-only port), ``wdata``,
    ``be`` (byte enables, bit k for byte k; absent: all bytes). Response fields: ``rdata``,
    ``resp_tag`` (copied from the request tag), ``resp_write`` (1 for a write acknowledgement).
    An access covers ``data_bytes`` bytes (the width of ``rdata``, else ``wdata``). Override
    :meth:`make_responses` for other shapes (several beats per request, sectors, ...).

    Parameters
    ----------
    req_fields, resp_fields : Fields
        Payload layouts of the request and response streams.
    names : dict, optional
        Role -> field name overrides of :data:`DEFAULT_NAMES`.
    memory : SparseMemory, optional
        Storage (default a fresh unbounded one); shared memories are allowed.
    min_latency, max_latency : int
        Response latency bounds in clock edges (>= 1).
    order : str
        ``"random"``, ``"by_latency"`` or ``"in_order"`` (see ``ResponseScheduler``).
    max_outstanding : int, optional
        Requests in flight (accepted, response not fully transferred) before ``req_ready`` falls.
    write_response : bool
        Writes get an acknowledgement response (else they complete silently).
    req_ready_prob, resp_gap_prob : float
        Random back-pressure on requests, random gaps before presenting responses (a number,
        or an object with ``next()`` such as a ``RandomGate``).
    burst : float
        Correlation length of both random patterns (see ``RandomGate``).
    addr_shift : int
        Request address unit: byte address = ``addr << addr_shift``.
    check_tags : bool
        Record an error when a request reuses a tag that is still in flight.
    rng : random.Random, optional
    name : str
    """

    def __init__(self, req_fields, resp_fields, names=None, memory=None, min_latency=1,
                 max_latency=8, order="random", max_outstanding=None, write_response=True,
                 req_ready_prob=1.0, resp_gap_prob=0.0, burst=1.0, addr_shift=0, check_tags=True,
                 rng=None, name="mem"):
        self.name = name
        self.req_fields = req_fields
        self.resp_fields = resp_fields
        self.names = dict(DEFAULT_NAMES)
        for role, field in (names or {}).items():
            if role not in DEFAULT_NAMES:
                raise ValueError(f"{name}: unknown field role {role!r}; roles: {', '.join(DEFAULT_NAMES)}")
            self.names[role] = field
        req_roles = ("addr", "tag", "write", "wdata", "be")
        self.req_role = {r: self.names[r] for r in req_roles if self.names[r] in req_fields.widths}
        self.resp_role = {r: self.names[r] for r in ("rdata", "resp_tag", "resp_write")
                          if self.names[r] in resp_fields.widths}
        if "addr" not in self.req_role:
            raise ValueError(f"{name}: request fields {req_fields!r} have no address field "
                             f"{self.names['addr']!r}")
        data_field = (resp_fields.widths.get(self.resp_role["rdata"]) if "rdata" in self.resp_role
                      else req_fields.widths.get(self.req_role.get("wdata")))
        if data_field is None or data_field % 8:
            raise ValueError(f"{name}: the data field must be a whole number of bytes, got {data_field}")
        self.data_bytes = data_field // 8
        if "wdata" in self.req_role and req_fields.widths[self.req_role["wdata"]] != data_field:
            raise ValueError(f"{name}: wdata and rdata widths differ")
        if "be" in self.req_role and req_fields.widths[self.req_role["be"]] != self.data_bytes:
            raise ValueError(f"{name}: byte-enable field must be {self.data_bytes} bits")
        if max_outstanding is not None and (isinstance(max_outstanding, bool)
                                            or not isinstance(max_outstanding, int)
                                            or max_outstanding < 1):
            raise ValueError(f"{name}: max_outstanding must be None or an integer >= 1, "
                             f"got {max_outstanding!r}")
        self.memory = memory if memory is not None else SparseMemory()
        self.rng = rng if rng is not None else random.Random(0)
        self.scheduler = ResponseScheduler(min_latency, max_latency, order, self.rng)
        self.max_outstanding = max_outstanding
        self.write_response = write_response
        self.addr_shift = addr_shift
        self.check_tags = check_tags and "tag" in self.req_role
        self.req_gate = self._gate(req_ready_prob, burst, "req_ready_prob")
        self.resp_gate = (resp_gap_prob if hasattr(resp_gap_prob, "next")
                          else self._gate(1.0 - resp_gap_prob, burst, "resp_gap_prob"))
        self.edges = 0
        self.outstanding = 0
        self._seq = 0
        self._inflight = {}             # seq -> entry
        self._entry = None              # entry whose beats are being sent
        self.errors = []
        self.accepted = []              # (edge, request dict) in accept order
        self.stats = {"requests": 0, "reads": 0, "writes": 0, "responses": 0, "beats": 0,
                      "max_outstanding": 0, "reordered": 0, "min_latency": None,
                      "max_latency": None, "req_stall_cycles": 0, "resp_stall_cycles": 0}
        self.req_ready = False
        self.resp_valid = False
        self.resp_payload = 0
        self._update_outputs()

    def _gate(self, prob, burst, what):
        if hasattr(prob, "next"):
            return prob
        try:
            return RandomGate(prob, self.rng, burst)
        except ValueError as exc:
            raise ValueError(f"{self.name}: {what}: {exc}") from None

    # -- memory access -------------------------------------------------------------------------

    def read(self, addr, length):
        """``length`` bytes at byte address ``addr`` (testbench setup and checks)."""
        return self.memory.read(addr, length)

    def write(self, addr, data, mask=None):
        """Write bytes at byte address ``addr`` (testbench setup)."""
        self.memory.write(addr, data, mask)

    def make_responses(self, req):
        """Apply request ``req`` (dict of request fields) and return its response beats.

        Each beat is a dict of response fields; an empty list means no response.
        """
        addr = req[self.req_role["addr"]] << self.addr_shift
        is_write = bool(req.get(self.req_role.get("write"), 0)) if "write" in self.req_role else False
        beat = {}
        if "resp_tag" in self.resp_role and "tag" in self.req_role:
            beat[self.resp_role["resp_tag"]] = req[self.req_role["tag"]]
        if is_write:
            wdata = req.get(self.req_role.get("wdata"), 0) if "wdata" in self.req_role else 0
            mask = req[self.req_role["be"]] if "be" in self.req_role else None
            self.memory.write_int(addr, wdata, self.data_bytes, mask)
            if not self.write_response:
                return []
            if "resp_write" in self.resp_role:
                beat[self.resp_role["resp_write"]] = 1
            return [beat]
        if "rdata" in self.resp_role:
            beat[self.resp_role["rdata"]] = self.memory.read_int(addr, self.data_bytes)
        return [beat]

    # -- cycle behaviour -----------------------------------------------------------------------

    def edge(self, req_word=None, resp_taken=False):
        """Advance over one clock edge: ``req_word`` transferred (or None), ``resp_taken`` =
        the presented response beat transferred. Updates the outputs for the next cycle."""
        self.edges += 1
        now = self.edges
        if req_word is not None and not self.req_ready:
            self.errors.append(f"{self.name}: edge {now}: request transferred while ready was low")
        if resp_taken:
            if not self.resp_valid:
                self.errors.append(f"{self.name}: edge {now}: response taken while valid was low")
            else:
                self._beat_done(now)
        if self.resp_valid and not resp_taken:
            self.stats["resp_stall_cycles"] += 1
        if req_word is not None:
            self._accept(now, req_word)
        self._update_outputs()

    def _accept(self, now, word):
        req = self.req_fields.unpack(word)
        self.accepted.append((now, req))
        self.stats["requests"] += 1
        is_write = "write" in self.req_role and req[self.req_role["write"]]
        self.stats["writes" if is_write else "reads"] += 1
        tag = req[self.req_role["tag"]] if "tag" in self.req_role else None
        if self.check_tags and any(e["tag"] == tag for e in self._inflight.values()):
            self.errors.append(f"{self.name}: edge {now}: request reuses tag {tag} still in flight")
        try:
            beats = self.make_responses(req)
        except ValueError as exc:
            self.errors.append(f"{self.name}: edge {now}: bad request {req}: {exc}")
            beats = []
        if not beats:
            return
        entry = {"seq": self._seq, "accept": now, "beats": [self.resp_fields.pack(**b) for b in beats],
                 "index": 0, "tag": tag, "req": req}
        self._seq += 1
        self._inflight[entry["seq"]] = entry
        self.outstanding += 1
        self.stats["max_outstanding"] = max(self.stats["max_outstanding"], self.outstanding)
        self.scheduler.push(now, entry)

    def _beat_done(self, now):
        entry = self._entry
        if entry["index"] == 0:
            latency = now - entry["accept"]
            lo, hi = self.stats["min_latency"], self.stats["max_latency"]
            self.stats["min_latency"] = latency if lo is None else min(lo, latency)
            self.stats["max_latency"] = latency if hi is None else max(hi, latency)
        entry["index"] += 1
        self.stats["beats"] += 1
        self.resp_valid = False
        if entry["index"] == len(entry["beats"]):
            del self._inflight[entry["seq"]]
            if any(seq < entry["seq"] for seq in self._inflight):
                self.stats["reordered"] += 1
            self.outstanding -= 1
            self.stats["responses"] += 1
            self._entry = None

    def _update_outputs(self):
        due = self.edges + 1                     # the edge at which a presented beat transfers
        if not self.resp_valid:
            if self._entry is None and self.scheduler and self.resp_gate.next():
                self._entry = self.scheduler.pop(due)
                self.resp_valid = self._entry is not None
            elif self._entry is not None and self.resp_gate.next():
                self.resp_valid = True
            if self.resp_valid:
                self.resp_payload = self._entry["beats"][self._entry["index"]]
        room = self.max_outstanding is None or self.outstanding < self.max_outstanding
        self.req_ready = room and self.req_gate.next()
        if not room:
            self.stats["req_stall_cycles"] += 1

    # -- end of test ---------------------------------------------------------------------------

    @property
    def idle(self):
        return self.outstanding == 0 and not self.scheduler and self._entry is None

    def in_flight(self):
        """Requests accepted whose responses are not complete, oldest first."""
        return [e["req"] for _, e in sorted(self._inflight.items())]

    def check_idle(self):
        """Raise AssertionError if a request is still in flight or a protocol error was seen."""
        problems = list(self.errors)
        if not self.idle:
            problems.append(f"{self.name}: {self.outstanding} request(s) still in flight: "
                            f"{self.in_flight()[:10]}")
        if problems:
            raise AssertionError("\n".join(problems))


class MemoryModel(MemoryCore):
    """A :class:`MemoryCore` attached to the request and response streams of a DUT.

    The model sinks stream ``req_prefix`` (drives its ``ready``) and sources stream
    ``resp_prefix`` (drives ``valid`` and ``payload``; random junk payload while ``valid`` is
    low). Start it after reset. Every keyword argument of :class:`MemoryCore` applies.

    Parameters
    ----------
    dut, clk
        The cocotb DUT and clock.
    req_prefix, resp_prefix : str
        Stream member names of the DUT's memory-side request (DUT output) and response (DUT
        input) streams.
    req_fields, resp_fields : Fields
        Their payload layouts.
    """

    def __init__(self, dut, clk, req_prefix, resp_prefix, req_fields, resp_fields, rng=None,
                 junk_payload=True, **kwargs):
        rng = rng if rng is not None else default_rng(f"{req_prefix}/{resp_prefix}", "memory")
        super().__init__(req_fields, resp_fields, rng=rng, **kwargs)
        self.clk = clk
        self.req_valid, self.req_ready_sig, self.req_payload = stream_signals(dut, req_prefix)
        self.resp_valid_sig, self.resp_ready, self.resp_payload_sig = stream_signals(dut, resp_prefix)
        if self.req_payload is None or self.resp_payload_sig is None:
            raise AttributeError(f"{self.name}: streams {req_prefix}/{resp_prefix} need payloads")
        for what, sig, fields in (("request", self.req_payload, req_fields),
                                  ("response", self.resp_payload_sig, resp_fields)):
            if len(sig) != fields.width:
                raise ValueError(f"{self.name}: {what} payload is {len(sig)} bits, Fields "
                                 f"layout {fields.width}")
        self.junk_payload = junk_payload
        self._junk_rng = random.Random(self.rng.getrandbits(32))
        self.req_ready_sig.value = 0
        self.resp_valid_sig.value = 0
        self._task = cocotb.start_soon(self._run())

    async def wait_idle(self, timeout_cycles=100_000):
        """Return once nothing is in flight; AssertionError after ``timeout_cycles``."""
        for _ in range(timeout_cycles):
            if self.idle:
                return
            await RisingEdge(self.clk)
        raise AssertionError(f"{self.name}: still busy after {timeout_cycles} cycles: "
                             f"{self.outstanding} in flight")

    def stop(self):
        self._task.cancel()

    async def _run(self):
        req_word = None
        resp_taken = False
        width = self.resp_fields.width
        while True:
            await RisingEdge(self.clk)
            self.edge(req_word, resp_taken)
            self.req_ready_sig.value = int(self.req_ready)
            self.resp_valid_sig.value = int(self.resp_valid)
            if self.resp_valid:
                self.resp_payload_sig.value = self.resp_payload
            elif self.junk_payload:
                self.resp_payload_sig.value = self._junk_rng.getrandbits(width)
            await ReadOnly()
            req_word = None
            if self.req_ready and read_int(self.req_valid) == 1:
                req_word = read_int(self.req_payload)
                if req_word is None:
                    raise AssertionError(f"{self.name}: request payload has X/Z bits in cycle "
                                         f"{sim_cycle()}")
            resp_taken = self.resp_valid and read_int(self.resp_ready) == 1
