"""Requirement traceability: spec IDs -> the pytest tests that cite them with ``@pytest.mark.req``."""

import contextlib
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from sim.errors import UsageError
from sim.paths import ROOT, build_dir, specs_dir

__all__ = ["REQ_ID", "spec_requirements", "collect_citations", "test_status", "vplan", "req_state"]

REQ_ID = re.compile(r"\b(TMA|TQ|WD|MR|DFP)-(F|I|C|E|P|V|GV)\d+\b")
# a range such as "DFP-GV6 … GV11" or "MR-GV1..GV20" names every ID between its ends
REQ_RANGE = re.compile(r"\b(TMA|TQ|WD|MR|DFP)-(F|I|C|E|P|V|GV)(\d+)\s*(?:…|\.\.\.?|–)\s*\2?(\d+)\b")


def spec_requirements(directory=None):
    """{spec file name: [IDs in order of first appearance]} for every ``*.md`` in the spec folder."""
    directory = Path(directory) if directory else specs_dir()
    if directory is None or not directory.is_dir():
        raise UsageError("no specification folder found (expected ../shared/specs; set GPUBLOCKS_SPECS)")
    result = {}
    for path in sorted(directory.glob("*.md")):
        text = path.read_text(errors="replace")
        found = [(m.start(), m.group(0)) for m in REQ_ID.finditer(text)]
        for m in REQ_RANGE.finditer(text):
            prefix, kind, lo, hi = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
            found += [(m.start(), f"{prefix}-{kind}{k}") for k in range(lo + 1, hi + 1)]
        ids = []
        for _, req in sorted(found, key=lambda x: x[0]):
            if req not in ids:
                ids.append(req)
        result[path.name] = ids
    return result


class _Collector:
    def __init__(self):
        self.citations = {}

    def pytest_collection_modifyitems(self, items):
        for item in items:
            for mark in item.iter_markers("req"):
                for req in mark.args:
                    self.citations.setdefault(req, []).append(item.nodeid)


def collect_citations(tests_dir=None):
    """{ID: [node ids]} from collecting the test suite (nothing is run)."""
    import pytest
    collector = _Collector()
    args = ["--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"), str(tests_dir or ROOT / "tests")]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = pytest.main(args, plugins=[collector])
    if code not in (0, 5):            # 5: no tests collected
        raise UsageError(f"pytest could not collect the tests (exit {int(code)}): "
                         + (sink.getvalue().strip().splitlines() or ["?"])[-1])
    return collector.citations


def test_status(junit=None):
    """{node id: 'passed' | 'failed' | 'skipped'} from the last ``make test`` JUnit report."""
    junit = Path(junit) if junit else build_dir("reports") / "junit.xml"
    if not junit.exists():
        return {}
    status = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "")
        path = module.replace(".", "/")
        nodeid = f"{path}.py::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            status[nodeid] = "failed"
        elif case.find("skipped") is not None:
            status[nodeid] = "skipped"
        else:
            status[nodeid] = "passed"
    return status


def vplan(spec_directory=None, tests_dir=None):
    """(per-spec ID lists, {ID: [node ids]} over all spec IDs, citations of unknown IDs)."""
    specs = spec_requirements(spec_directory)
    citations = collect_citations(tests_dir)
    known = {req for ids in specs.values() for req in ids}
    table = {req: sorted(citations.get(req, [])) for ids in specs.values() for req in ids}
    unknown = {req: nodes for req, nodes in citations.items() if req not in known}
    return specs, table, unknown


def req_state(nodes, status):
    """"passed" when a test citing the requirement passed in the last ``make test`` and none
    failed, "failed" when one failed, else None; tests make test does not run (``slow``)
    neither prove nor disprove."""
    states = [status.get(t) for t in nodes]
    if "failed" in states:
        return "failed"
    return "passed" if "passed" in states else None
