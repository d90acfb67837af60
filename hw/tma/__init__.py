"""TMA unit (spec tma.md): RTL modules. Part-1 front end: :class:`~hw.tma.setup.TmaSetup`
(decode, validate, precompute) and :class:`~hw.tma.reqgen.TmaReqGen` (tile/block request
generator)."""
