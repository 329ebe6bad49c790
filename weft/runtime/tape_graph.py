"""``Tape.visualize``: the recorded launches and copies as a GraphViz ``dot`` graph.

Arrays are ellipses, launches boxes, copies small boxes; an edge runs from each array a launch reads to the launch
and from the launch to each array it writes. Scopes recorded with ``record_scope_begin`` / ``record_scope_end``
become nested clusters. With ``simplify_graph`` a run of consecutive launches of one kernel with the same arguments
becomes one node labelled ``(repeated Nx)``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field


@dataclass
class _Step:
    """One node of the graph: a launch (or a run of identical launches) or a copy."""

    first: int  # index of its first tape entry
    label: str
    tooltip: str
    reads: list = field(default_factory=list)  # arrays
    writes: list = field(default_factory=list)
    names: dict = field(default_factory=dict)  # id(array) -> parameter names it was passed as
    repeat: int = 1
    signature: tuple = ()


def _quote(text: str) -> str:
    return '"' + html.escape(text, quote=False).replace('"', '\\"') + '"'


def _steps(records, simplify: bool) -> list[_Step]:
    from .tape import CopyRecord, LaunchRecord

    steps: list[_Step] = []
    for index, rec in enumerate(records):
        if isinstance(rec, LaunchRecord):
            arrays = [(i, a) for i, a in enumerate(rec.args) if hasattr(a, "_shared")]
            names = rec.kernel._param_names
            step = _Step(index, rec.kernel.__name__, f"dim={tuple(rec.dims)}",
                         reads=[a for i, a in arrays if i in rec.spec.read or i not in rec.spec.written],
                         writes=[a for i, a in arrays if i in rec.spec.written],
                         signature=(id(rec.kernel), tuple(id(a) for a in rec.args), rec.dims))
            for i, a in arrays:
                step.names.setdefault(id(a), []).append(names[i])
        elif isinstance(rec, CopyRecord):
            step = _Step(index, "copy", f"count={rec.count}", reads=[rec.src], writes=[rec.dest],
                         names={id(rec.src): ["src"], id(rec.dest): ["dest"]}, signature=("copy", id(rec.src),
                                                                                            id(rec.dest)))
        else:
            step = _Step(index, getattr(rec, "__name__", "record_func"), "recorded function",
                         signature=("func", index))
        prev = steps[-1] if steps else None
        if simplify and prev is not None and prev.signature == step.signature and prev.label != "record_func":
            prev.repeat += 1
            continue
        steps.append(step)
    return steps


def _scope_tree(scopes, n_records: int, ignore: bool):
    """Nested (name, start, end, children) scopes over tape entry indices."""
    root = ("", 0, n_records, [])
    if ignore:
        return root
    stack = [[None, 0, n_records, []]]
    for index, name, _meta in scopes:
        if name is not None:
            stack.append([name, index, None, []])
        elif len(stack) > 1:
            node = stack.pop()
            node[2] = index
            stack[-1][3].append(tuple(node))
    while len(stack) > 1:  # scopes never ended run to the end
        node = stack.pop()
        node[2] = n_records
        stack[-1][3].append(tuple(node))
    return ("", 0, n_records, stack[0][3])


def visualize(tape, filename=None, simplify_graph=True, hide_readonly_arrays=False, array_labels=None,
              choose_longest_node_name=True, ignore_graph_scopes=False, track_inputs=None, track_outputs=None,
              track_input_names=None, track_output_names=None, graph_direction="LR") -> str:
    steps = _steps(tape.launches, simplify_graph)
    labels = {id(a): text for a, text in (array_labels or {}).items()}
    tracked = {}
    for arrays, names, kind in ((track_inputs, track_input_names, "input"),
                                (track_outputs, track_output_names, "output")):
        for k, a in enumerate(arrays or ()):
            tracked[id(a)] = kind
            if names and k < len(names):
                labels.setdefault(id(a), names[k])
    written = {id(a) for s in steps for a in s.writes}
    arrays: dict[int, object] = {}
    seen_names: dict[int, list[str]] = {}
    for s in steps:
        for a in [*s.reads, *s.writes]:
            arrays.setdefault(id(a), a)
        for key, names in s.names.items():
            seen_names.setdefault(key, []).extend(names)
    shown = {k for k in arrays if not hide_readonly_arrays or k in written or k in tracked}

    def array_label(key: int) -> str:
        if key in labels:
            return labels[key]
        names = seen_names.get(key) or ["array"]
        return max(names, key=len) if choose_longest_node_name else names[0]

    lines = ["digraph Tape {", f"    rankdir={graph_direction};", '    node [fontname="Helvetica"];']
    for key in sorted(shown, key=lambda k: list(arrays).index(k)):
        a = arrays[key]
        color = {"input": "lightblue", "output": "lightsalmon"}.get(tracked.get(key), "white")
        tip = f"array: dtype={getattr(a.dtype, '__name__', a.dtype)}, shape={tuple(a.shape)}"
        lines.append(f"    a{key} [shape=ellipse, style=filled, fillcolor={color}, label={_quote(array_label(key))}, "
                     f"tooltip={_quote(tip)}];")

    def emit(scope, depth: int) -> None:
        _name, start, end, inner = scope
        pad = "    " * depth
        for s in steps:
            if not start <= s.first < end or any(c[1] <= s.first < c[2] for c in inner):
                continue
            label = s.label if s.repeat == 1 else f"{s.label} (repeated {s.repeat}x)"
            shape = "box" if s.label != "copy" else "cds"
            lines.append(f"{pad}s{s.first} [shape={shape}, style=filled, fillcolor=lightgrey, "
                         f"label={_quote(label)}, tooltip={_quote(s.tooltip)}];")
        for k, child in enumerate(inner):
            lines.append(f"{pad}subgraph cluster_{child[1]}_{k}_{depth} {{")
            lines.append(f"{pad}    label={_quote(child[0])};")
            emit(child, depth + 1)
            lines.append(f"{pad}}}")

    emit(_scope_tree(tape.scopes, len(tape.launches), ignore_graph_scopes), 1)
    for s in steps:
        for a in s.reads:
            if id(a) in shown:
                lines.append(f"    a{id(a)} -> s{s.first};")
        for a in s.writes:
            if id(a) in shown:
                lines.append(f"    s{s.first} -> a{id(a)};")
    lines.append("}")
    dot = "\n".join(lines) + "\n"
    if filename is not None:
        with open(filename, "w") as f:
            f.write(dot)
    return dot
