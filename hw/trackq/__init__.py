"""Tracking queues (spec trackq.md): out-of-order miss tracking over a shared linked-list pool.

Modules (spec §2 module table): :class:`~hw.trackq.mapper.QueueMapper`,
:class:`~hw.trackq.pool.EntryPool`, :class:`~hw.trackq.queues.LinkedQueues`,
:class:`~hw.trackq.sectors.SectorValidTable`, :class:`~hw.trackq.heads.HeadTracker`,
:class:`~hw.trackq.commit.CommitPicker`, :class:`~hw.trackq.oldest.Oldest` (G), the top
:class:`~hw.trackq.top.TrackingQueues` and the baseline :class:`~hw.trackq.fifo.SingleFifo`.
The round-robin arbiter is ``hw.common.arbiter.RoundRobinArbiter``.
"""
