"""Base-layer memory router and migration engine (spec memrouter.md): page-table translation,
near/far interleave, QoS arbitration per memory port, migration through a sectored page cache.

Modules (spec §2.3): :class:`~hw.memrouter.portmodel.PortModel` (simulation-only memory port),
:class:`~hw.memrouter.qos.QosArbiter` and :class:`~hw.memrouter.qos_port.QosPort` (per-port
class queues and arbitration).
"""
