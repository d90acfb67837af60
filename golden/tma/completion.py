"""Completion accounting (spec tma.md §4.11; TMA-F29, F35..F38, TMA-E7, TMA-V8, V17; seed ¶100).

Cycle-independent rules, kept by :class:`Completion`:

- retirement: every accepted command ends with exactly one ``err`` (rejected, emitted when setup
  finds the fault) or one ``done``; ``done`` events follow acceptance order among non-rejected
  commands, each after the command's side effects (:meth:`Completion.finish`);
- WAIT_ALL: its ``done`` follows every ``done``/``err`` of earlier commands (it is retired when it
  reaches the head of the retirement order); later commands are not held back by it;
- NOP, DESC_INVAL: ``done`` at once (still in order);
- ``outstanding``: +1 per tracked ``l2_req`` (READ, WRITE, RED), -1 per ``l2_resp``;
- barriers: per (CTA, barrier address), cumulative ``tx`` never exceeds the bytes written by beats of
  the commands that use that barrier, and per command and destination CTA the ``tx`` sum equals the
  box bytes, OOB fill included (checked by the model at the end of each load);
- ``idle``: nothing accepted is still unretired and nothing is outstanding.

The golden model drives it; a testbench can drive it with the handshakes it observes and get the
same checks (:class:`CompletionError` on a violation).
"""

from collections import Counter, deque

from golden.tma.formats import N_CTA

__all__ = ["Completion", "CompletionError"]


class CompletionError(AssertionError):
    """A completion rule was broken."""


class Completion:
    def __init__(self, log=None):
        self.log = [] if log is None else log
        self._order = deque()          # [seq, id, op, state]; state busy / finished / rejected
        self._by_seq = {}
        self.done = []
        self.errs = []
        self.outstanding = 0
        self.written = Counter()        # (cta, mbar_addr) -> bytes written by beats
        self.tx = Counter()             # (cta, mbar_addr) -> tx credited

    def accept(self, seq, cmd_id, op):
        entry = [seq, cmd_id, op, "busy"]       # WAIT_ALL too: setup may still reject it
        self._order.append(entry)
        self._by_seq[seq] = entry

    def reject(self, seq, code):
        """Setup rejected command ``seq``: its ``err`` is emitted now."""
        entry = self._entry(seq)
        entry[3] = "rejected"
        self.errs.append((entry[1], int(code)))
        self.log.append(("err", entry[1], int(code)))
        self._retire()

    def finish(self, seq):
        """Command ``seq`` has completed its side effects; emits every ``done`` now due."""
        entry = self._entry(seq)
        if entry[3] != "busy":
            raise CompletionError(f"command {seq} finished twice or after rejection")
        entry[3] = "finished"
        self._retire()

    def _entry(self, seq):
        try:
            return self._by_seq[seq]
        except KeyError:
            raise CompletionError(f"command {seq} was never accepted or already retired") from None

    def _retire(self):
        while self._order and self._order[0][3] != "busy":
            seq, cmd_id, _op, state = self._order.popleft()
            del self._by_seq[seq]
            if state == "finished":
                self.done.append(cmd_id)
                self.log.append(("done", cmd_id))

    def request(self, tracked=True):
        if tracked:
            self.outstanding += 1

    def response(self):
        if self.outstanding <= 0:
            raise CompletionError("l2_resp with nothing outstanding")
        self.outstanding -= 1

    def beat(self, mask, nbytes, mbar_addr):
        """A ``smem_wr`` beat of a command whose barrier is ``mbar_addr``."""
        for cta in range(N_CTA):
            if mask >> cta & 1:
                self.written[cta, mbar_addr] += nbytes

    def mbar(self, update):
        """An ``mbar`` update; it may only cover bytes of beats already written."""
        for cta in range(N_CTA):
            if update.mask >> cta & 1:
                key = cta, update.addr
                self.tx[key] += update.tx
                if self.tx[key] > self.written[key]:
                    raise CompletionError(f"barrier {update.addr:#x} of CTA {cta}: tx "
                                          f"{self.tx[key]} > bytes written {self.written[key]}")

    @property
    def pending(self):
        return len(self._order)

    @property
    def idle(self):
        return not self._order and self.outstanding == 0
