"""``gpublocks regress``: the RTL regression through pytest, with a per-block summary table."""

import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict

from sim.paths import ROOT, build_dir

__all__ = ["rtl_test_files", "regress"]


def rtl_test_files(block):
    """tests/rtl files of a block: ``test_<block>.py`` and ``test_<block>_*.py``."""
    rtl = ROOT / "tests" / "rtl"
    return sorted(set(rtl.glob(f"test_{block.name}.py")) | set(rtl.glob(f"test_{block.name}_*.py")))


def regress(blocks, jobs=2, extra_args=()):
    """Run the RTL tests of ``blocks``; returns (exit code, rows of the summary table)."""
    files = [str(f) for b in blocks for f in rtl_test_files(b)]
    if not files:
        return 5, []
    junit = build_dir("reports") / "regress.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", str(jobs), f"--junitxml={junit}", *extra_args, *files]
    start = time.monotonic()
    code = subprocess.call(cmd, cwd=ROOT)
    wall = time.monotonic() - start
    per = defaultdict(lambda: {"tests": 0, "passed": 0, "failed": 0, "skipped": 0, "seconds": 0.0})
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            module = case.get("classname", "").rsplit(".", 1)[-1]
            row = per[module.removeprefix("test_")]
            row["tests"] += 1
            row["seconds"] += float(case.get("time", 0))
            if case.find("failure") is not None or case.find("error") is not None:
                row["failed"] += 1
            elif case.find("skipped") is not None:
                row["skipped"] += 1
            else:
                row["passed"] += 1
    rows = [{"file": name, **row} for name, row in sorted(per.items())]
    rows.append({"file": f"total (wall {wall:.0f} s)", **{k: sum(r[k] for r in rows)
                                                        for k in ("tests", "passed", "failed", "skipped", "seconds")}})
    return code, rows
