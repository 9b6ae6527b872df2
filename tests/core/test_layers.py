"""The layers, enforced over every import statement (lazy ones inside functions too).

    faces        memory_core/cli/ · mycel_dashboard/ (api, screens, web…)   never each other
    application  memory_core/app/                                           one function per question
    analyses     the pure rules and analyses                               no I/O: never stores/
    stores       memory_core/stores/                                        input and output only
    kernel       the types and values every layer shares

No layer imports one above it; memory_core never imports Django; the module graph has no circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What the stores may hand up and the rules may share: types, and the values and pure helpers the stores
# need to build them. Everything else in memory_core outside stores/, app/, cli/ and demo/ is an analysis.
KERNEL = (
    "memory_core.records",
    "memory_core.messages",
    "memory_core.secrets",
    "memory_core.memo",
    "memory_core.tokens",
    "memory_core.ids",
    "memory_core.breaker",
    "memory_core.spill_notice",
    "memory_core.context_limits",
    "memory_core.memory_settings",
    "memory_core.rollback",
    "memory_core.config",
    "memory_core.search",
    "memory_core.footprint.facts",
    "memory_core.figures",
)
RANK = {"kernel": 0, "stores": 1, "analyses": 1, "app": 2, "cli": 3, "demo": 3, "web": 3}
# The one sanctioned crossing between faces: the `mycel-memory` entry point wires the dashboard's audit
# log into the engine's command line.
ENTRY_POINT = "mycel_dashboard.cli"


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer_of(module: str) -> str:
    if _within(module, "mycel_dashboard"):
        return "web"
    if _within(module, "memory_core.cli") or module == "memory_core.__main__":
        return "cli"
    for name in ("app", "stores", "demo"):
        if _within(module, f"memory_core.{name}"):
            return name
    if module == "memory_core" or any(_within(module, k) for k in KERNEL):
        return "kernel"
    return "analyses"


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in ("memory_core", "mycel_dashboard"):
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(path: Path) -> Iterator[str]:
    """Every module an import statement of `path` names, `from a import b` as both a and a.b."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {m for m in imports(path) if m in known and m != name} for name, path in known.items()}


def wrong_way(importer: str, imported: str) -> str | None:
    """Why `importer` may not import `imported`, or None when it may."""
    above, below = layer_of(importer), layer_of(imported)
    if importer == ENTRY_POINT and below == "cli":
        return None
    if {above, below} == {"cli", "web"}:
        return "the faces never call each other"
    if {above, below} == {"stores", "analyses"}:
        return "stores and the pure analyses never import each other"
    if RANK[below] > RANK[above]:
        return f"{above} imports {below}, a layer above it"
    return None


def test_no_import_goes_up_a_layer_or_across_faces() -> None:
    found = [
        f"{importer} -> {imported}: {why}"
        for importer, targets in sorted(graph().items())
        for imported in sorted(targets)
        if (why := wrong_way(importer, imported)) is not None
    ]
    assert found == []


def test_memory_core_never_imports_django() -> None:
    found = [
        f"{name} imports {module}"
        for name, path in sorted(modules().items())
        if name.startswith("memory_core")
        for module in imports(path)
        if module.split(".")[0] == "django"
    ]
    assert found == []


def test_the_module_graph_has_no_circle() -> None:
    edges = graph()
    # A package's __init__ importing its own modules is how a package speaks, not a circle.
    for name in edges:
        edges[name] = {m for m in edges[name] if not _within(m, name)}
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                circles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert circles == []


def test_the_rule_catches_what_it_forbids() -> None:
    # The checks above pass on an empty list; these are the arrows the layers exist to refuse.
    assert wrong_way("memory_core.stores.reader", "memory_core.app.thread")
    assert wrong_way("memory_core.stores.reader", "memory_core.pruning")
    assert wrong_way("memory_core.pruning", "memory_core.stores.reader")
    assert wrong_way("memory_core.app.thread", "memory_core.cli.threads")
    assert wrong_way("mycel_dashboard.api.views", "memory_core.cli.threads")
    assert wrong_way("memory_core.cli.threads", "mycel_dashboard.models")
    assert wrong_way("memory_core.records", "memory_core.stores.reader")
    assert wrong_way("memory_core.cli.threads", "memory_core.app.thread") is None
    assert wrong_way("mycel_dashboard.api.views", "memory_core.app.thread") is None
    assert wrong_way(ENTRY_POINT, "memory_core.cli") is None
    assert len(graph()) > 250
