"""The project's JVM module (`jvm/`, Maven): Kafka's pinned jars and the thin adapters around them.

`build()` runs Maven when the module's sources changed since the last build (a stamp of their
hash in `jvm/target/`); `./run` calls it on first use, as it installs the virtualenv. `classpath()`
is the adapters' jar and Kafka's, `java(...)` the command line that starts a JVM on it. Everything
that needs no JVM works without Java or Maven: these functions raise `KafkaUnavailableError` saying what
is missing, and only the commands and tests that need Kafka call them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from optimizer.errors import KafkaUnavailableError

MODULE = Path(__file__).resolve().parents[2] / "jvm"
"""The Maven module, beside the Python packages in the repository (the project runs from its
clone, installed in editable mode)."""

TARGET = MODULE / "target"
JAR = TARGET / "kao-jvm.jar"
CLASSPATH = TARGET / "classpath.txt"
"""Kafka's jars and their dependencies, as Maven resolved them (`dependency:build-classpath`)."""

KAFKA_VERSION = "4.4.0"
"""The Kafka release the module pins (`kafka.version` in jvm/pom.xml)."""


def sources_hash() -> str:
    """A hash of the module's pom and sources: the build is current when its stamp has it. The
    same as `./run` computes in shell: the pom's bytes, then every source file's in path order."""
    digest = hashlib.sha256((MODULE / "pom.xml").read_bytes())
    for path in sorted((p for p in (MODULE / "src").rglob("*") if p.is_file()), key=lambda p: str(p).encode()):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _stamp() -> Path:
    return TARGET / f".built-{sources_hash()}"


def built() -> bool:
    """Whether the module was built from its current sources."""
    return _stamp().is_file() and JAR.is_file() and CLASSPATH.is_file()


def build(quiet: bool = True) -> None:
    """Build the module with Maven unless it is current; KafkaUnavailableError without Maven or Java,
    or when the build fails (with Maven's last lines)."""
    if built():
        return
    maven = shutil.which("mvn")
    if maven is None:
        raise KafkaUnavailableError("Maven (mvn) is not on the PATH: the JVM module (jvm/) cannot be built")
    _java_executable()
    run = subprocess.run(
        [maven, *(["-q"] if quiet else []), "-B", "-f", str(MODULE / "pom.xml"), "package"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if run.returncode != 0:
        tail = "\n".join((run.stdout + run.stderr).strip().splitlines()[-20:])
        raise KafkaUnavailableError(f"building the JVM module (jvm/) failed:\n{tail}")
    for old in TARGET.glob(".built-*"):
        old.unlink()
    _stamp().touch()


def classpath() -> str:
    """The adapters' jar, then Kafka's jars (building the module first when needed)."""
    build()
    return os.pathsep.join([str(JAR), CLASSPATH.read_text(encoding="utf-8").strip()])


RELEASES = TARGET / "releases"
"""Other Kafka releases' classpaths, one file each (`release_classpath`)."""


def release_classpath(release: str) -> str:
    """The adapters' jar (compiled against the pinned release) with Kafka `release`'s jars in place
    of the pinned ones: the same pom resolved with `-Dkafka.version=release` (Maven Central, once;
    cached in jvm/target/releases/). For checking the reproduction of older releases against their
    own classes (bench/); an adapter that uses an API the release lacks fails when it reaches it."""
    if release == KAFKA_VERSION:
        return classpath()
    build()
    listed = RELEASES / f"{release}.txt"
    if not listed.is_file():
        RELEASES.mkdir(parents=True, exist_ok=True)
        maven = shutil.which("mvn") or "mvn"
        run = subprocess.run(
            [maven, "-q", "-B", "-f", str(MODULE / "pom.xml"), f"-Dkafka.version={release}", "dependency:build-classpath",
             f"-Dmdep.outputFile={listed}", "-Dmdep.includeScope=runtime"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if run.returncode != 0 or not listed.is_file():
            listed.unlink(missing_ok=True)
            tail = "\n".join((run.stdout + run.stderr).strip().splitlines()[-10:])
            raise KafkaUnavailableError(f"Kafka {release}'s jars could not be resolved:\n{tail}")
    return os.pathsep.join([str(JAR), listed.read_text(encoding="utf-8").strip()])


def _java_executable() -> str:
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home) / "bin" / "java" if home else None
    if candidate is not None and candidate.is_file():
        return str(candidate)
    found = shutil.which("java")
    if found is None:
        raise KafkaUnavailableError("Java is not installed (no java on the PATH, no JAVA_HOME): Kafka cannot run here")
    return found


def java(main: str, arguments: Sequence[str] = (), heap_mb: int = 256, properties: dict[str, str] | None = None, release: str | None = None) -> list[str]:
    """The command that runs `main` (a class name) on the module's classpath, with a heap of
    `heap_mb` MB and system `properties`; with Kafka `release`'s jars instead of the pinned ones
    when given (`release_classpath`)."""
    flags = [f"-D{key}={value}" for key, value in sorted((properties or {}).items())]
    path = classpath() if release is None else release_classpath(release)
    return [_java_executable(), f"-Xms{min(64, heap_mb)}m", f"-Xmx{heap_mb}m", "-XX:+UseSerialGC", *flags, "-cp", path, main, *arguments]


def run_java(main: str, arguments: Sequence[str] = (), timeout: float = 60.0, heap_mb: int = 256, stdin: str | None = None, release: str | None = None) -> str:
    """Run `main` to its end (with `stdin` as its input) and return its stdout; KafkaUnavailableError
    with its stderr when it fails or does not end within `timeout` seconds. `release`: another
    Kafka release's jars (`release_classpath`)."""
    try:
        done = subprocess.run(java(main, arguments, heap_mb, release=release), input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise KafkaUnavailableError(f"{main} did not end within {timeout:g} s") from None
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise KafkaUnavailableError(f"{main} failed (exit {done.returncode}):\n{tail}")
    return done.stdout
