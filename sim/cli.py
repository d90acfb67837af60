"""The ``gpublocks`` command line (CONVENTIONS §5).

Exit status: 0 success, 1 a check failed (mismatch, lint, test), 2 bad arguments or input.
"""

import argparse
import json
import sys

from sim import registry
from sim.errors import UsageError
from sim.table import print_table

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage problem in one line (no usage dump) with exit status 2."""

    def error(self, message):
        raise UsageError(message)


def _params(pairs):
    params = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"-p expects NAME=VALUE, got {pair!r}")
        params[name] = value
    return params


def cmd_list(args):
    rows = []
    for b in registry.REGISTRY.values():
        params = ", ".join(f"{p.name}={p.default} ({p.legal})" for p in b.params) or "-"
        rows.append({"block": b.name, "kind": b.kind, "status": b.status, "top": b.top or "-",
                     "parameters (default, legal)": params, "spec": b.spec})
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print_table(rows, ["block", "kind", "status", "top", "parameters (default, legal)", "spec"])
    return 0


def _seconds(text):
    """argparse type of a time limit: a whole number of seconds, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of seconds, got {text!r}")
    return value


def _selected(args, what):
    blocks = registry.resolve_names(args.blocks, args.all, what=what)
    overrides = _params(args.param)
    if overrides and len(blocks) != 1:
        raise UsageError("-p applies to one block; name exactly one")
    return [(b, b.resolve_params(overrides)) for b in blocks]


def cmd_verilog(args):
    from sim.verilog import write_verilog
    for block, params in _selected(args, "verilog"):
        path, name = write_verilog(block, params, out_dir=args.out)
        lines = path.read_text().count("\n")
        print(f"{block.name}: module {name} -> {path} ({lines} lines)")
    return 0


def cmd_lint(args):
    from sim.verilog import lint, write_verilog
    failed = 0
    for block, params in _selected(args, "lint"):
        path, name = write_verilog(block, params)
        ok, messages = lint(path, name)
        print(f"{block.name}: {'clean' if ok else 'FAILED'} (verilator --lint-only -Wall, {path.name})")
        if not ok:
            failed += 1
            print(messages)
    return 1 if failed else 0


def cmd_run(args):
    from sim.run import run_stimulus
    from sim.seed import pick_seed
    block = registry.resolve_names([args.block], False, need=lambda b: b.adapter is not None, what="run")[0]
    seed = pick_seed(f"run {block.name}") if args.sim != "golden" else 0
    if args.sim != "golden":
        from sim.simulators import require
        require(args.sim)
    record = run_stimulus(block, args.stimulus, sim=args.sim, out=args.out, seed=seed, waves=args.waves)
    verdict = "PASS" if record["passed"] else f"FAIL ({record['mismatch_count']} mismatches)"
    print(f"{block.name} on {args.sim}: {verdict}; {json.dumps(record['summary'])}; result -> {record['out']}")
    for problem in record["mismatches"][:10]:
        print(f"  {problem}")
    if "waves" in record:
        print(f"waves -> {record['waves']}")
    return 0 if record["passed"] else 1


def cmd_regress(args):
    from sim.regress import regress, rtl_test_files
    blocks = registry.resolve_names(args.blocks, not args.blocks,
                                    need=lambda b: bool(rtl_test_files(b)), what="regress")
    code, rows = regress(blocks, jobs=args.jobs)
    if rows:
        print()
        for r in rows:
            r["seconds"] = f"{r['seconds']:.1f}"
        print_table(rows, ["file", "tests", "passed", "failed", "skipped", "seconds"])
    return 0 if code == 0 else 1


def cmd_bench(args):
    from sim.bench import run_bench, supports_bench
    from sim.seed import pick_seed
    blocks = registry.resolve_names(args.blocks, not args.blocks, need=supports_bench, what="bench")
    for block in blocks:
        figures, out, png = run_bench(block, pick_seed(f"bench {block.name}"))
        if args.json:
            print(json.dumps(figures, indent=1))
        else:
            headline = {k: v for k, v in figures.items() if not isinstance(v, dict)}
            print(f"{block.name}: " + ", ".join(f"{k}={v}" for k, v in headline.items()))
        print(f"{block.name}: figures -> {out}" + (f", plot -> {png}" if png else ""))
    return 0


def fpga_builds(args):
    """The (block, params) builds of ``gpublocks fpga``: each named block at its parameters,
    then, when no -p is given, at each of its ``fpga_variants``."""
    builds = []
    for block, params in _selected(args, "fpga"):
        builds.append((block, params))
        if not args.param:
            builds += [(block, block.resolve_params(dict(v))) for v in block.fpga_variants]
    return builds


def cmd_fpga(args):
    from sim.fpga import FpgaBuildError, build_fpga, fmax_text, untimed_note
    selected = fpga_builds(args)
    failed = 0
    for block, params in selected:
        try:
            limit = {} if args.router2_limit is None else {"router2_limit": args.router2_limit or None}
            r = build_fpga(block, params, board=args.board, force=args.force, **limit)
        except FpgaBuildError as exc:
            print(f"gpublocks: fpga: {exc}", file=sys.stderr)
            failed += 1
            continue
        cells = (f"{r['name']}: LUT4 {r['lut4']}, CCU2C {r['ccu2c']}, FF {r['ff']}, "
                 f"MULT18X18D {r['dsp']}, DP16KD {r['bram']}")
        if r.get("fmax_mhz") is None:
            print(f"{cells}; {fmax_text(r)}: no Fmax")
            continue
        verdict = "met" if r["met"] else "MISSED"
        path = r.get("critical_path_summary", {})
        print(f"{cells}; Fmax {r['fmax_mhz']:.1f} MHz{untimed_note(r)} ({verdict} {r['target_mhz']} MHz)")
        if path.get("from"):
            print(f"  critical path {path['ns']} ns ({path['logic_ns']} logic): {path['from']} -> {path['to']}")
    if len(selected) > failed:
        from sim.paths import build_dir
        print(f"report -> {build_dir('fpga') / 'report.json'}, {build_dir('fpga') / 'report.md'}")
    return 1 if failed else 0


def cmd_synth(args):
    from sim.synth import SynthError, synth_block
    selected = _selected(args, "synth")
    failed = 0
    for block, params in selected:
        try:
            r = synth_block(block, params, force=args.force)
        except SynthError as exc:
            print(f"gpublocks: synth: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"{r['name']}: {r['nand2_eq']} NAND2 eq., {r['cells']} cells ({r['ff']} DFF); "
              f"{r['memories']} memories, {r['memory_bits']} bits")
    if len(selected) > failed:
        from sim.paths import build_dir
        print(f"report -> {build_dir('synth') / 'report.json'}, {build_dir('synth') / 'report.md'}")
    return 1 if failed else 0


def cmd_report(args):
    from sim.report import write_report
    md, html = write_report()
    print(f"report -> {md}, {html}")
    return 0


def _grouped(nodes, status):
    """Parametrized cases folded into their test function, with a combined status."""
    groups = {}
    for node in nodes:
        groups.setdefault(node.split("[", 1)[0], []).append(status.get(node, "not run"))
    parts = []
    for base, states in groups.items():
        verdict = "failed" if "failed" in states else states[0] if len(set(states)) == 1 else "partly run"
        cases = f"{len(states)} cases, " if len(states) > 1 else ""
        parts.append(f"{base} ({cases}{verdict})")
    return parts


def cmd_vplan(args):
    from sim.vplan import req_state, test_status, vplan
    specs, table, unknown = vplan(args.specs)
    if args.json:
        print(json.dumps(table, indent=1))
        return 0
    status = test_status()

    def passing(req):
        return req_state(table[req], status) == "passed"

    for spec, ids in specs.items():
        print(f"== {spec}: {sum(1 for i in ids if table[i])}/{len(ids)} covered")
        for req in ids:
            if table[req] or args.all:
                lines = _grouped(table[req], status) or ["-"]
                print(f"  {req:9} {lines[0]}")
                for line in lines[1:]:
                    print(f"  {'':9} {line}")
    for req, nodes in sorted(unknown.items()):
        print(f"warning: {req} is cited by {', '.join(nodes)} but appears in no spec", file=sys.stderr)
    print()
    for spec, ids in specs.items():
        covered = sum(1 for i in ids if table[i])
        print(f"{spec:14} covered {covered}/{len(ids)}  "
              f"passing in last make test {sum(1 for i in ids if passing(i))}/{len(ids)}")
    return 0


def _build_args(p, force_help):
    """BLOCK ..., --all, -p and --force: the arguments of the commands that build designs."""
    p.add_argument("blocks", nargs="*", metavar="BLOCK")
    p.add_argument("--all", action="store_true", help="every block that is built")
    p.add_argument("-p", dest="param", action="append", metavar="NAME=VALUE", help="override a parameter")
    p.add_argument("--force", action="store_true", help=force_help)


def build_parser():
    parser = _Parser(prog="gpublocks", description="GPU hardware blocks: Verilog, simulation, checks, figures.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("list", help="blocks, their top components and default parameters")
    p.add_argument("--json", action="store_true", help="machine-readable")
    p.set_defaults(func=cmd_list)

    for name, func, text in [("verilog", cmd_verilog, "generate Verilog into build/verilog/"),
                             ("lint", cmd_lint, "Verilator -Wall lint of the generated Verilog")]:
        p = sub.add_parser(name, help=text)
        p.add_argument("blocks", nargs="*", metavar="BLOCK")
        p.add_argument("--all", action="store_true", help="every block that is built")
        p.add_argument("-p", dest="param", action="append", metavar="NAME=VALUE", help="override a parameter")
        if name == "verilog":
            p.add_argument("--out", help="output folder (default build/verilog)")
        p.set_defaults(func=func)

    p = sub.add_parser("run", help="run a stimulus file through the RTL and compare with the golden model")
    p.add_argument("block", metavar="BLOCK")
    p.add_argument("stimulus", metavar="STIMULUS.json")
    p.add_argument("--sim", default="verilator", choices=["verilator", "icarus", "golden"])
    p.add_argument("--out", metavar="RESULT.json", help="default build/run/<block>.json")
    p.add_argument("--waves", action="store_true", help="write an FST (Verilator) / VCD waveform")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("regress", help="RTL regression with progress and a summary table")
    p.add_argument("blocks", nargs="*", metavar="BLOCK")
    p.add_argument("-j", dest="jobs", type=int, default=2, help="parallel workers (default 2)")
    p.set_defaults(func=cmd_regress)

    p = sub.add_parser("bench", help="cycle-counted benchmarks -> build/bench/<block>.json")
    p.add_argument("blocks", nargs="*", metavar="BLOCK")
    p.add_argument("--json", action="store_true", help="print the full figures as JSON")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("fpga", help="FPGA build (ULX3S-85F, YoWASP): LUT/FF/DSP/BRAM, Fmax -> build/fpga/")
    _build_args(p, "rebuild even when the tool inputs are unchanged")
    p.add_argument("--board", default="ulx3s-85f", help="target board (default ulx3s-85f, the only one)")
    p.add_argument("--router2-limit", type=_seconds, metavar="SECONDS",
                   help="time for each nextpnr router2 run, timed and then untimed, when router1 "
                        "has not converged in 20 minutes (default one hour, "
                        "sim.fpga.ROUTER2_LIMIT_S; 0: no limit); a design still unrouted after "
                        "the untimed run is reported as placed, without Fmax")
    p.set_defaults(func=cmd_fpga)

    p = sub.add_parser("synth", help="generic Yosys synthesis: cells, NAND2 equivalents -> build/synth/")
    _build_args(p, "rerun even when the RTL is unchanged")
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("report", help="one page of every figure and target -> build/report/index.md, .html")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("vplan", help="requirement coverage: spec IDs and the tests citing them")
    p.add_argument("--json", action="store_true", help='print {"ID": ["node id", ...]}')
    p.add_argument("--all", action="store_true", help="also list uncovered IDs one per line")
    p.add_argument("--specs", help="specification folder (default ../shared/specs)")
    p.set_defaults(func=cmd_vplan)
    return parser


def main(argv=None):
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        return args.func(args)
    except UsageError as exc:
        print(f"gpublocks: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:                   # output piped into `head` and the like
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
