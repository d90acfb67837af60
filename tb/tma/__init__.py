"""cocotb testbenches of the TMA unit (spec tma.md): ``setup_tb`` (TmaSetup) and ``reqgen_tb``
(TmaSetup -> TmaReqGen front end)."""
