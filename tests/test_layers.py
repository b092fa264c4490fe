"""The import layers of docs/architecture.md: every module imports on its own, no import cycle,
and no layer imports a layer above it.

Layers, bottom up: `plugins` → the core (model, errors, formulation, the `Goal` base and what it
encodes on, evaluate, ...) → inputs (`optimizer.sources`) → the exact engine, its back-ends and the
catalogue of names → Kafka's assignors → what users call (solve, compare, console, cli, pipeline,
report, testing, and the `optimizer` package that re-exports them) → `goals`, the built-in goals.
A folder belongs to one layer as a whole; a module of the `optimizer/` root is named on its own.
The graph is read from the source (function-level imports included), so a lazy import does not
hide a cycle.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PACKAGES = ("plugins", "optimizer", "goals")

LAYERS = (
    ("plugins",),
    (
        "optimizer.model", "optimizer.errors", "optimizer.version", "optimizer.costs", "optimizer.levels", "optimizer.formulation",
        "optimizer.goal", "optimizer.protocols", "optimizer.results", "optimizer.placement", "optimizer.deadline", "optimizer.activity", "optimizer.text",
        "optimizer.money", "optimizer.evaluate", "optimizer.generate", "optimizer.rebalance", "optimizer.kafka",
    ),
    ("optimizer.sources",),
    ("optimizer.engine", "optimizer.backends", "optimizer.catalogue"),
    ("optimizer.assignors",),
    (
        "optimizer.solve", "optimizer.compare", "optimizer.console", "optimizer.cli", "optimizer.pipeline", "optimizer.report",
        "optimizer.testing", "optimizer.oracle", "optimizer.service", "optimizer.__main__", "optimizer",
    ),
    ("goals",),
)  # fmt: skip
"""Folders and root modules per layer, bottom up (docs/architecture.md's table); the longest
matching name decides."""


def _modules() -> dict[str, str]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = str(path)
    return found


MODULES = _modules()


def _imports(name: str, path: str) -> set[str]:
    """The project modules `name` imports (an imported name that is a submodule counts as it)."""
    is_package = path.endswith("__init__.py")
    found = set()
    for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {module for module in found if module in MODULES and module != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> int:
    best, layer = -1, None
    for number, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, layer = len(prefix), number
    assert layer is not None, f"{name} belongs to no layer: add it to LAYERS"
    return layer


def test_the_layers_are_folders_and_root_modules_that_exist():
    """A layer names whole folders (packages) and modules of the `optimizer/` root, never a module
    inside a folder: a folder is in one layer. Each name exists."""
    for name in (entry for layer in LAYERS for entry in layer):
        parts = name.split(".")
        path = REPO.joinpath(*parts)
        assert len(parts) <= 2, f"{name}: a layer names a folder or a root module, not a module inside a folder"
        assert path.is_dir() or path.with_suffix(".py").is_file(), f"{name} names no folder or module"


def test_the_contributors_page_draws_these_layers():
    """docs/architecture.md's table (between its `layers` markers) lists the same names per layer."""
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("<!-- layers: read by tests/test_layers.py -->", 1)[1].split("<!-- /layers -->", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| layer")]
    drawn = [tuple(name.strip("` ") for name in row.split("|")[2].split(",")) for row in rows]
    assert drawn == [tuple(layer) for layer in LAYERS]


def test_the_built_in_goals_use_the_core_only():
    """A goal encodes on what `optimizer.goal` and `optimizer.protocols` promise: the built-in
    goals import the core and `plugins`, never the engine, the back-ends, Kafka's assignors or
    what users call (docs/architecture.md, "A goal")."""
    reaching = [
        f"{module} imports {target} (layer {_layer(target)})"
        for module in sorted(GRAPH)
        if module.split(".")[0] == "goals"
        for target in sorted(GRAPH[module])
        if target.split(".")[0] != "goals" and _layer(target) > 1
    ]
    assert reaching == []


def test_there_is_no_import_cycle():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(GRAPH[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert cycles == []


def test_no_layer_imports_a_layer_above_it():
    upward = [
        f"{module} (layer {_layer(module)}) imports {target} (layer {_layer(target)})"
        for module in sorted(GRAPH)
        for target in sorted(GRAPH[module])
        if _layer(target) > _layer(module)
    ]
    assert upward == []


_IMPORT_EACH = """
import importlib, json, os, sys, traceback, types
for library in ("numpy", "scipy.sparse", "pydantic", "yaml", "pluggy", "click", "rich.console", "highspy", "pulp",
                "ortools.graph.python.min_cost_flow", "ortools.sat.python.cp_model", "pyarrow", "pandas", "pyspark.sql", "matplotlib",
                # what a model class's creation imports of pydantic (lazily, in every child otherwise: a fifth of their time)
                "pydantic.main", "pydantic.fields", "pydantic.json_schema", "pydantic.type_adapter", "pydantic.functional_validators",
                "pydantic._internal._generate_schema", "pydantic.plugin._loader", "annotated_types", "email.utils"):
    try:
        importlib.import_module(library)  # third-party libraries once, before forking: fast children
    except ImportError:
        pass
failed, running, waiting = {}, {}, list(sys.argv[1:])
while waiting or running:
    while waiting and len(running) < (os.cpu_count() or 1):
        module = waiting.pop(0)
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(reader)
            try:
                if module != "optimizer":  # the package's __init__ imports nearly everything: leave it out
                    package = types.ModuleType("optimizer")
                    package.__path__ = [os.path.join(os.getcwd(), "optimizer")]
                    sys.modules["optimizer"] = package
                importlib.import_module(module)
                code = 0
            except BaseException:
                os.write(writer, traceback.format_exc()[-3000:].encode())
                code = 1
            os._exit(code)
        os.close(writer)
        running[pid] = (module, reader)
    pid, status = os.wait()
    module, reader = running.pop(pid)
    message = os.read(reader, 65536)  # the child wrote at most 3,000 bytes before exiting
    os.close(reader)
    if status != 0:
        failed[module] = message.decode()
print(json.dumps(failed))
"""


def test_every_module_imports_on_its_own():
    """Each module first, in a fresh interpreter (a fork taken before any project import), with
    the `optimizer` package's own `__init__` (which re-exports the public API, so imports nearly
    everything) left out: an import that only works after another module was imported fails here."""
    modules = sorted(m for m in MODULES if m != "optimizer.__main__")  # __main__ runs the command line
    run = subprocess.run([sys.executable, "-c", _IMPORT_EACH, *modules], capture_output=True, text=True, cwd=REPO, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout) == {}
