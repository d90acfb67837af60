"""``gpublocks report``: one page with every block's measured figures beside the specs' targets.

It reads what the other commands wrote: ``build/bench/<block>.json`` and ``.png`` (``gpublocks
bench``), ``build/fpga/report.json`` (``gpublocks fpga``), ``build/synth/report.json``
(``gpublocks synth``), and the requirement coverage of ``gpublocks vplan`` with the last
``make test`` results. Nothing is measured here, so the page is only as fresh as those files; it
says which are missing. The page is built once as a list of elements and written both as
``build/report/index.md`` and ``index.html``; the plots are copied beside it so the folder can be
moved or published as it is.
"""

import datetime
import html
import json
import re
import shutil
import subprocess

from sim import registry
from sim.errors import UsageError
from sim.paths import ROOT, build_dir
from sim.reportfile import markdown_table, params_text, read_report
from sim.targets import TARGETS, judge

__all__ = ["build_document", "write_report", "render_markdown", "render_html"]

PASSING = ("pass", "pass (tests)")
MARK = {"pass": "✅ pass", "pass (tests)": "✅ pass (tests)", "short": "❌ short",
        "fail (tests)": "❌ fail (tests)", "not measured": "⚪ not measured", "not run": "⚪ not run"}


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _coverage():
    """({spec file: (covered, passing, total)}, {ID: state}) or (None, {}) without the specs."""
    from sim.vplan import req_state, test_status, vplan
    try:
        specs, table, _ = vplan()
    except UsageError:
        return None, {}
    status = test_status()
    states = {req: req_state(nodes, status) for req, nodes in table.items()}
    return ({spec: (sum(1 for i in ids if table[i]), sum(1 for i in ids if states[i] == "passed"),
                    len(ids)) for spec, ids in specs.items()}, states)


def _bench(name):
    path = build_dir("bench") / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def build_document():
    """The page as a list of (kind, ...) elements: ("h1" | "h2" | "p", text), ("table", head,
    rows), ("img", relative path, caption)."""
    blocks = [b for b in registry.REGISTRY.values() if b.kind == "block" and b.ready]
    fpga, synth = read_report("fpga"), read_report("synth")
    coverage, states = _coverage()
    doc = [("h1", "gpublocks: measured figures"),
           ("p", f"Commit {_commit()}, written {datetime.datetime.now():%Y-%m-%d %H:%M} by "
                 "`gpublocks report` from `build/bench` (`gpublocks bench`), `build/fpga` "
                 "(`gpublocks fpga --all`), `build/synth` (`gpublocks synth --all`) and the "
                 "last `make test` (`gpublocks vplan`). Every figure is a cycle count from RTL "
                 "simulation or a tool report; rerun those commands to refresh it.")]

    judged = {}
    for block in blocks:
        figures = _bench(block.name)
        judged[block.name] = [(t, *judge(t, figures, fpga, states.get(t.req))) for t in TARGETS.get(block.name, ())]

    head = ["block", "requirements cited / passing / total", "performance targets met",
            "LUT4", "FF", "MULT18X18D", "DP16KD", "Fmax (MHz)", "NAND2 eq.", "memory bits"]
    rows = []
    for block in blocks:
        spec = f"{block.name}.md"
        cov = "/".join(map(str, coverage[spec])) if coverage and spec in coverage else "specs not found"
        rows_t = judged[block.name]
        met = sum(1 for _, _, mark in rows_t if mark in PASSING)
        short = [t.req for t, _, mark in rows_t if mark in ("short", "fail (tests)")]
        f, s = fpga.get(block.name), synth.get(block.name)
        rows.append([block.name, cov, f"{met} / {len(rows_t)}" + (f" (short: {', '.join(short)})" if short else ""),
                     *(str(f[k]) if f else "-" for k in ("lut4", "ff", "dsp", "bram")),
                     "; ".join([_fmax_text(f) if f else "-", *_variant_fmax(block, fpga)]),
                     str(s["nand2_eq"]) if s else "-", str(s["memory_bits"]) if s else "-"])
    doc += [("h2", "Summary"),
            ("p", "One row per block at its default parameters (and the Fmax of the variants "
                  "`gpublocks fpga` builds besides it). FPGA: Lattice ECP5 LFE5U-85F "
                  "(ULX3S), Yosys + nextpnr, 100 MHz target. NAND2 eq.: generic Yosys synthesis, "
                  "memories apart as macros (memory bits). A dash: not built yet."),
            ("table", head, rows)]

    for block in blocks:
        doc += [("h2", f"{block.name}: {block.summary}")]
        figures_path = build_dir("bench") / f"{block.name}.json"
        if not figures_path.exists():
            doc.append(("p", f"No benchmark figures: run `gpublocks bench {block.name}`."))
        else:
            seed = (_bench(block.name).get("config") or {}).get("seed")
            doc.append(("p", f"Benchmark figures: `build/bench/{block.name}.json` (seed {seed}). "
                             f"Targets from `{block.spec}`."))
        doc.append(("table", ["ID", "level", "metric", "target", "measured", "result"],
                    [[t.req, t.level, t.what, t.target, text, MARK[mark]]
                     for t, text, mark in judged[block.name]]))
        for png in sorted(build_dir("bench").glob(f"{block.name}*.png")):
            doc.append(("img", f"img/{png.name}", f"{block.name}: {png.stem}"))

    doc.append(("h2", "FPGA builds (ECP5 LFE5U-85F, ULX3S)"))
    if fpga:
        doc.append(("p", "Each block between LFSR inputs and XOR-reduced pins, PLL to 100 MHz, "
                         "nextpnr seed 1. Whole-design cells; `build/fpga/<build>/` has the logs."))
        doc.append(("table", ["build", "parameters", "LUT4", "CCU2C", "FF", "MULT18X18D", "DP16KD",
                              "Fmax (MHz)", "≥ 100 MHz", "critical path"],
                    [[name, params_text(r["params"]), *(str(r[k]) for k in ("lut4", "ccu2c", "ff", "dsp", "bram")),
                      _fmax_text(r, mark=False), MARK["pass" if r["met"] else "short"],
                      _path_summary(r)] for name, r in fpga.items()]))
    else:
        doc.append(("p", "Not built: run `gpublocks fpga --all`."))

    doc.append(("h2", "Generic synthesis (ASIC-style)"))
    if synth:
        doc.append(("p", "Yosys `synth`, flip-flops legalized to plain D flip-flops, `abc` to "
                         "AND/NAND/OR/NOR/XOR/XNOR/MUX/NOT; NAND2 equivalents by NanGate45 cell "
                         "areas. Memories kept as macros: their bits are listed, not in the gate count."))
        doc.append(("table", ["build", "parameters", "NAND2 eq.", "cells", "DFF", "memories", "memory bits"],
                    [[name, params_text(r["params"]), str(r["nand2_eq"]), str(r["cells"]), str(r["ff"]),
                      str(r["memories"]), str(r["memory_bits"])] for name, r in synth.items()]))
    else:
        doc.append(("p", "Not run: run `gpublocks synth --all`."))
    return doc


def _variant_fmax(block, fpga):
    """``NAME=VALUE ...: Fmax`` of each of the block's built ``fpga_variants``."""
    from sim.verilog import module_name
    for variant in block.fpga_variants:
        r = fpga.get(module_name(block, block.resolve_params(dict(variant))))
        if r:
            yield f"{params_text(dict(variant))}: {_fmax_text(r)}"


def _fmax_text(r, mark=True):
    from sim.fpga import fmax_text
    if r.get("fmax_mhz") is None:
        return fmax_text(r)
    return fmax_text(r) + ("" if r["met"] or not mark else " ❌")


def _endpoint(step):
    """The register or memory a critical-path step starts or ends at, without Yosys' cell
    suffixes: ``queues.cq_count[3]`` from ``... queues.cq_count[3]_TRELLIS_FF_Q_4.Q -> Q``."""
    cell = step.split(" -> ")[0].split()[-1].rsplit(".", 1)[0]
    return re.split(r"_TRELLIS_FF|_DP16KD|_MULT18X18D|\$", cell)[0]


def _path_summary(r):
    """``from → to, ns (steps)`` of the build's critical path."""
    path = r.get("critical_path") or []
    if not path:
        return "-"
    ns = sum(float(step.split()[0]) for step in path)
    return f"{_endpoint(path[0])} → {_endpoint(path[-1])}, {ns:.1f} ns"


def render_markdown(doc):
    out = []
    for kind, *rest in doc:
        if kind in ("h1", "h2"):
            out += [("#" if kind == "h1" else "##") + " " + rest[0], ""]
        elif kind == "p":
            out += [rest[0], ""]
        elif kind == "table":
            out += [*markdown_table(*rest), ""]
        elif kind == "img":
            out += [f"![{rest[1]}]({rest[0]})", ""]
    return "\n".join(out)


def _inline(text):
    """HTML of a paragraph: escaped, with `code` spans."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


STYLE = ("body{font-family:sans-serif;max-width:80em;margin:2em auto;padding:0 1em}"
         "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.2em .5em;"
         "text-align:left;vertical-align:top}th{background:#eee}img{max-width:100%}")


def render_html(doc):
    out = ["<!DOCTYPE html>", '<html><head><meta charset="utf-8"><title>gpublocks report</title>',
           f"<style>{STYLE}</style></head><body>"]
    for kind, *rest in doc:
        if kind in ("h1", "h2"):
            out.append(f"<{kind}>{_inline(rest[0])}</{kind}>")
        elif kind == "p":
            out.append(f"<p>{_inline(rest[0])}</p>")
        elif kind == "table":
            head, rows = rest
            out.append("<table><tr>" + "".join(f"<th>{_inline(h)}</th>" for h in head) + "</tr>")
            out += ["<tr>" + "".join(f"<td>{_inline(str(c))}</td>" for c in row) + "</tr>" for row in rows]
            out.append("</table>")
        elif kind == "img":
            out.append(f'<figure><img src="{html.escape(rest[0])}" alt="{html.escape(rest[1])}">'
                       f"<figcaption>{html.escape(rest[1])}</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_report():
    """Write ``build/report/index.md`` and ``index.html`` (plots into ``img/``); returns both paths."""
    out = build_dir("report")
    img = build_dir("report", "img")
    for old in img.glob("*.png"):
        old.unlink()
    for png in build_dir("bench").glob("*.png"):
        shutil.copy2(png, img / png.name)
    doc = build_document()
    (out / "index.md").write_text(render_markdown(doc))
    (out / "index.html").write_text(render_html(doc))
    return out / "index.md", out / "index.html"
