"""What the executors of a cluster need, shipped with the job: this virtualenv packed as their
Python, the way PySpark's documentation ships one (`venv-pack`, Spark's `spark.archives`, and
`PYSPARK_PYTHON=./environment/bin/python`).

The archive holds what the workers import: the package (its own files, also when it is installed
editable, which venv-pack would otherwise pack as a pointer into the driver's checkout), its
dependencies with their solvers (HiGHS, OR-Tools, CBC inside PuLP), pyarrow and pandas for
Spark's Arrow exchange, and the goal plug-ins the driver loads, with theirs; not pyspark and
py4j (the cluster's own Spark puts its pyspark on the workers' path, in its own version), nor
the rest of the virtualenv (test and report tools). Like any venv-pack archive it refers to the
base Python by path: the executors' machines need Python 3.11 where the driver's venv was made.

It is cached under the user's cache directory by the content of what it holds (names, sizes and
modification times), so only the first run after a change packs (10 s for 230 MB here).
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from collections.abc import Iterable
from importlib.metadata import Distribution, distributions, entry_points
from pathlib import Path

from optimizer.errors import PipelineError

ALIAS = "environment"
"""The directory the executors unpack the archive into (`--archives kao.tar.gz#environment`)."""
EXECUTOR_PYTHON = f"./{ALIAS}/bin/python"
"""PYSPARK_PYTHON for the executors: the unpacked archive's Python, relative to their work directory."""
PROJECT = "kafka-assignment-optimizer"
SPARK_WORKER_NEEDS = ("pyarrow", "pandas")
"""What PySpark's Arrow workers import beside the package (mapInArrow)."""
CLUSTER_PROVIDES = frozenset({"pyspark", "py4j"})
"""The cluster's Spark puts these on its Python workers' path; shipping another version would clash."""
PLUGIN_GROUP = "kafka_assignment_optimizer"
KEPT = 2
"""Archives kept in the cache: the newest (another virtualenv may use the one before)."""


def executor_archive(cache: Path | None = None) -> Path:
    """The packed environment for the executors: from the cache, else packed now."""
    prefix = Path(sys.prefix)
    if prefix == Path(sys.base_prefix):
        raise PipelineError(
            f"the executors' Python is packed from a virtualenv, and {sys.executable} runs outside one: "
            "install kafka-assignment-optimizer in a venv, or set PYSPARK_PYTHON to a Python the executors have that holds it"
        )
    files = environment_files(prefix)
    key = hashlib.sha256()
    for source, target in sorted(files, key=lambda pair: pair[1]):
        status = os.stat(source, follow_symlinks=False)
        key.update(f"{target}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    cache = cache or _cache_directory()
    archive = cache / f"executors-{key.hexdigest()[:16]}.tar.gz"
    if archive.exists():
        return archive
    cache.mkdir(parents=True, exist_ok=True)
    _pack(prefix, files, archive)
    for older in sorted(cache.glob("executors-*.tar.gz"), key=lambda p: p.stat().st_mtime)[:-KEPT]:
        older.unlink(missing_ok=True)  # an environment changed since: its archive will not be asked for again
    return archive


def environment_files(prefix: Path) -> list[tuple[str, str]]:
    """(source, target) of every file of the archive under `prefix`, targets relative to it."""
    try:
        import venv_pack
    except ImportError:
        raise PipelineError(
            "the executors' environment is packed with venv-pack, which is not installed: pip install venv-pack "
            "(the spark extra has it), or set PYSPARK_PYTHON to a Python the executors have with the package"
        ) from None

    try:
        environment = venv_pack.Env(str(prefix))
    except venv_pack.VenvPackException as error:
        raise PipelineError(f"cannot pack {prefix} for the executors: {error}") from None
    site = _site_packages(prefix)
    kept: set[str] = set()
    extra: list[tuple[str, str]] = []
    for dist in needed_distributions(prefix / site):
        if Path(os.path.normpath(str(dist.locate_file("")))).is_relative_to(prefix):
            kept.update(_installed_files(dist, prefix))
            extra += _editable_files(dist, site)
        else:  # a plug-in installed beside the virtualenv (PYTHONPATH): into the archive's site-packages
            extra += _outside_files(dist, site)
    files = []
    for file in environment.files:
        # What the needed distributions installed (in site-packages and bin/), and the Python.
        if (file.target in kept and "__editable__" not in file.target) or re.fullmatch(r"bin/python[\d.]*", file.target):
            files.append((file.source, file.target))
    return files + extra


def needed_distributions(site: Path) -> list[Distribution]:
    """The package, PySpark's Arrow needs and the loaded goal plug-ins, with every distribution
    they require (extras left out), but what the cluster's Spark provides: as installed in `site`
    (the virtualenv's site-packages), else where Python finds them (a plug-in on PYTHONPATH)."""
    from plugins.manager import plugins

    installed = {_normalised(dist.metadata["Name"]): dist for dist in distributions()}
    installed |= {_normalised(dist.metadata["Name"]): dist for dist in distributions(path=[str(site)])}
    loaded = {plugin.name for plugin in plugins().loaded}
    roots = [PROJECT, *SPARK_WORKER_NEEDS]
    roots += [entry.dist.name for entry in entry_points(group=PLUGIN_GROUP) if entry.name in loaded and entry.dist is not None]
    found: dict[str, Distribution] = {}
    waiting = list(roots)
    while waiting:
        name = _normalised(waiting.pop())
        if name in found or name in CLUSTER_PROVIDES:
            continue
        if name not in installed:
            if name in map(_normalised, roots):
                raise PipelineError(f"{name} is not installed in {site}: the executors need it")
            continue  # a requirement whose marker does not apply here
        found[name] = installed[name]
        waiting += _requirements(installed[name].requires or ())
    return [found[name] for name in sorted(found)]


def _requirements(requires: Iterable[str]) -> list[str]:
    names = []
    for requirement in requires:
        _, _, marker = requirement.partition(";")
        if "extra" in marker:
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        if match:
            names.append(match[1])
    return names


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _site_packages(prefix: Path) -> str:
    [site] = [p for p in (prefix / "lib").glob("python*/site-packages")]
    return str(site.relative_to(prefix))


def _installed_files(dist: Distribution, prefix: Path) -> set[str]:
    """The files `dist` installed (its RECORD), as paths relative to `prefix`."""
    targets = set()
    for path in dist.files or ():
        located = Path(os.path.normpath(str(dist.locate_file(path))))
        if located.is_relative_to(prefix):
            targets.add(str(located.relative_to(prefix)))
    return targets


def _outside_files(dist: Distribution, site: str) -> list[tuple[str, str]]:
    """The files of a distribution found outside the virtualenv, where they go in its
    site-packages (paths as its RECORD gives them under its folder; scripts left out)."""
    files = []
    for path in dist.files or ():
        relative = os.path.normpath(str(path))
        source = Path(str(dist.locate_file(path)))
        if not relative.startswith("..") and "__pycache__" not in Path(relative).parts and source.is_file():
            files.append((str(source), f"{site}/{relative}"))
    return files


def _editable_files(dist: Distribution, site: str) -> list[tuple[str, str]]:
    """An editable install's packages, copied into the archive's site-packages as a normal
    install would have put them (setuptools' editable finder maps each to its source folder)."""
    files = []
    for path in dist.files or ():
        if not (path.name.startswith("__editable__") and path.name.endswith("_finder.py")):
            continue
        finder = Path(str(dist.locate_file(path)))
        mapping = _finder_mapping(finder)
        for package, folder in sorted(mapping.items()):
            root = Path(folder)
            if root.is_file():  # a top-level module
                files.append((str(root), f"{site}/{root.name}"))
                continue
            for directory, subdirectories, names in os.walk(root):
                subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
                for name in sorted(names):
                    source = Path(directory) / name
                    files.append((str(source), f"{site}/{package}/{source.relative_to(root)}"))
    return files


def _finder_mapping(finder: Path) -> dict[str, str]:
    for node in ast.parse(finder.read_text()).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "MAPPING" and node.value is not None:
            mapping = ast.literal_eval(node.value)
            if isinstance(mapping, dict):
                return {str(k): str(v) for k, v in mapping.items()}
    raise PipelineError(f"cannot read the editable install's packages from {finder}: install the package normally to ship it")


def _pack(prefix: Path, files: list[tuple[str, str]], archive: Path) -> None:
    import venv_pack
    from venv_pack.core import File

    environment = venv_pack.Env(str(prefix))
    environment.files = [File(source, target) for source, target in files]
    temporary = archive.with_name(f".{archive.name}.{os.getpid()}")
    try:
        environment.pack(output=str(temporary), format="tar.gz", compress_level=1, force=True)
        os.replace(temporary, archive)
    except (OSError, venv_pack.VenvPackException) as error:
        temporary.unlink(missing_ok=True)
        raise PipelineError(f"cannot pack {prefix} for the executors into {archive}: {error}") from None


def _cache_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-assignment-optimizer"
