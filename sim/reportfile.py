"""A per-flow report file: ``build/<flow>/report.json`` keyed by build name, and its Markdown table.

``gpublocks fpga`` and ``gpublocks synth`` build one design at a time, from concurrent processes
too (pytest-xdist); each build merges its entry under a lock, so the report always holds the
newest entry of every build that ever ran, sorted by name. Each build also keeps its full
record in ``build/<flow>/<name>.json`` with the hash of its tool inputs, so an unchanged design
is not rebuilt.
"""

import hashlib
import json

from sim.filelock import file_lock
from sim.paths import build_dir

__all__ = ["merge_entry", "read_report", "params_text", "markdown_table", "markdown_page",
           "input_key", "reusable_record", "save_record"]


def input_key(*inputs):
    """A short hash of a build's tool inputs (JSON-serialisable values)."""
    return hashlib.sha256(json.dumps(list(inputs)).encode()).hexdigest()[:16]


def reusable_record(flow, name, key, force=False):
    """The saved record of build ``name`` when it was made from the same inputs (``key``);
    None when ``force``, when it was never built, or when its inputs changed."""
    path = build_dir(flow) / f"{name}.json"
    if force or not path.exists():
        return None
    old = json.loads(path.read_text())
    return old if old.get("key") == key else None


def save_record(flow, name, record):
    """Write build ``name``'s full record to ``build/<flow>/<name>.json``; returns the path."""
    path = build_dir(flow) / f"{name}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


def read_report(flow):
    """The ``build/<flow>/report.json`` dict ({} when nothing was built yet)."""
    path = build_dir(flow) / "report.json"
    return json.loads(path.read_text()) if path.exists() else {}


def merge_entry(flow, name, entry, markdown):
    """Put ``entry`` under ``name`` in ``build/<flow>/report.json``; rewrite ``report.md`` as
    ``markdown(report)``. Returns the merged report."""
    root = build_dir(flow)
    with file_lock(root / "report.lock"):
        report = read_report(flow)
        report[name] = entry
        report = dict(sorted(report.items()))
        (root / "report.json").write_text(json.dumps(report, indent=1) + "\n")
        (root / "report.md").write_text(markdown(report))
    return report


def params_text(params):
    """``a=1, b=2`` (``-`` for none): a build's parameters in a table cell."""
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "-"


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(head, rows):
    """The lines of a Markdown table (cells escaped)."""
    return ["| " + " | ".join(map(_cell, head)) + " |", "|" + "---|" * len(head),
            *("| " + " | ".join(map(_cell, row)) + " |" for row in rows)]


def markdown_page(title, text, head, rows):
    """A flow's ``report.md``: a title, one paragraph, one table."""
    return "\n".join([f"# {title}", "", text, "", *markdown_table(head, rows)]) + "\n"
