"""Merge the RTLIL modules that differ only in Amaranth's private ``$N`` names.

Amaranth emits one module per elaborated instance, and numbers its private wires and cells
(``$123``, ``\\port$123$0``) with counters that run across the whole design. N copies of one
sub-block (the wdist rasterizers: one per SM) therefore come out as N modules with the same
structure but different numbers, and Yosys and Verilator process every copy. Renumbering the
private names per module in order of first use makes identical copies textually identical; the
duplicates are then dropped and their instances point at the first copy. The top module keeps
its names (its ports are the block's interface), and so do the public names of every module.
"""

import re

__all__ = ["dedupe_modules"]

_MODULE = re.compile(r"((?:^attribute [^\n]*\n)*)^module (\S+)\n(.*?)^end\n", re.M | re.S)
_TOKEN = re.compile(r"[\\$][^\s\"\[\]]*")
_NUMBERED = re.compile(r"\$\d")
_CELL = re.compile(r"^(\s*)cell (\S+) (\S+)$")
_CONNECT = re.compile(r"^(\s*)connect (\S+) (.*)$")


def _rename_line(line, names):
    return _TOKEN.sub(lambda t: names.get(t.group(0), t.group(0)), line)


def _canonical(body, port_maps, rep, keep_names):
    """Rewrite one module body: child cell types -> their representative, child port names
    through the child's map, own numbered names in order of first use. Returns the text and
    the module's own map (old name -> new name)."""
    own = {}
    counter = [0]

    def learn(line):
        if keep_names:
            return
        for t in _TOKEN.findall(line):
            if t not in own and _NUMBERED.search(t):
                counter[0] += 1
                own[t] = f"{t[:_NUMBERED.search(t).start()]}${counter[0]}"

    out, child = [], None
    for line in body.split("\n"):
        cell = _CELL.match(line)
        if cell and cell.group(2) in port_maps:
            child = cell.group(2)
            learn(cell.group(3))
            out.append((f"{cell.group(1)}cell {rep[child]} ", cell.group(3)))
            continue
        if child is not None:
            conn = _CONNECT.match(line)
            if conn:
                port = port_maps[child].get(conn.group(2), conn.group(2))
                learn(conn.group(3))
                out.append((f"{conn.group(1)}connect {port} ", conn.group(3)))
                continue
            if line.strip() == "end":
                child = None
        learn(line)
        out.append(("", line))
    return "\n".join(pre + _rename_line(rest, own) for pre, rest in out), own


def dedupe_modules(text, top):
    """``text`` with duplicate modules merged (see the module docstring); ``top`` is the name
    of the top module (``\\`` + the name given to the converter). Returns (text, merged), merged
    being the number of modules dropped."""
    modules = {name: body for _, name, body in _MODULE.findall(text)}
    children = {name: {m.group(2) for m in map(_CELL.match, body.split("\n"))
                       if m and m.group(2) in modules}
                for name, body in modules.items()}
    port_maps, rep, canon_text, seen = {}, {}, {}, {}
    order = []

    def visit(name):
        if name in port_maps:
            return
        for c in sorted(children[name]):
            visit(c)
        body, own = _canonical(modules[name], port_maps, rep, keep_names=(name == top))
        port_maps[name] = own
        if name != top and body in seen:
            rep[name] = seen[body]
        else:
            rep[name] = name
            seen.setdefault(body, name)
            canon_text[name] = body
            order.append(name)

    for name in modules:
        visit(name)
    kept = set(order)

    def module_text(match):
        attrs, name = match.group(1), match.group(2)
        return f"{attrs}module {name}\n{canon_text[name]}end\n" if name in kept else ""

    return _MODULE.sub(module_text, text), len(modules) - len(kept)
