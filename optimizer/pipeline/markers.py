"""Per-problem progress from the executors: each Spark task appends one line per problem it has
solved to a file of its own under the staging directory, and the driver reads what was added
since its last look (`MarkReader.poll`).

Spark itself tells the driver only when a whole task is done (its status tracker counts tasks;
accumulators arrive with the task's result), and a task solves a batch of problems, so it cannot
count problems. The staging directory is where the executors already read their batches and
write their parts (a filesystem the driver and the executors share), so the marks cost one small
append per problem and no extra channel. A task attempt writes its own file (a retried or
speculative attempt writes another), and the reader counts each problem once, by name.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import IO

PROGRESS = "progress"
"""Where in the staging directory the marks go (removed with the staged input once solved)."""


class MarkWriter:
    """A task attempt's marks: `mark(name, seconds)` after each problem, flushed at once."""

    def __init__(self, stage: str | Path, part: str) -> None:
        directory = Path(stage) / PROGRESS
        directory.mkdir(exist_ok=True)
        self._file: IO[str] = open(directory / f"{part}.{os.getpid()}.{uuid.uuid4().hex[:8]}", "a", encoding="utf-8")

    def mark(self, name: str, seconds: float) -> None:
        self._file.write(json.dumps([name, round(seconds, 4)]) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> MarkWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MarkReader:
    """The driver's side: the names of the problems marked since the last `poll`."""

    def __init__(self, stage: str | Path) -> None:
        self._directory = Path(stage) / PROGRESS
        self._read: dict[str, int] = {}  # bytes of each file already read (whole lines only)
        self.done: set[str] = set()

    def poll(self) -> set[str]:
        """Problems newly marked (each name once, however many attempts marked it)."""
        new: set[str] = set()
        try:
            files = sorted(os.scandir(self._directory), key=lambda entry: entry.name)
        except FileNotFoundError:
            return new
        for entry in files:
            start = self._read.get(entry.name, 0)
            try:
                if entry.stat().st_size <= start:
                    continue
                with open(entry.path, "rb") as handle:
                    handle.seek(start)
                    data = handle.read()
            except OSError:
                continue
            whole = data.rfind(b"\n") + 1  # a line still being written is read next time
            self._read[entry.name] = start + whole
            for line in data[:whole].splitlines():
                try:
                    name = json.loads(line)[0]
                except (ValueError, IndexError, TypeError):
                    continue
                if name not in self.done:
                    self.done.add(name)
                    new.add(name)
        return new
