"""Golden model of the tracking queues (spec trackq.md §4): pure numpy/Python, never imports
Amaranth or cocotb.

The cycle-explicit ``TrackingQueuesModel`` (§4.4), the ``SingleFifoModel`` baseline (§4.5), the
trace runner, the golden vectors of §5, the B-RAND benchmark (TQ-GV19) and trace-level checkers of
the verification obligations (TQ-V2..V13). See ``docs/trackq.md``.
"""
