"""The README's Python example runs as written and shows what it says."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import REPO


def test_readme_python_example(monkeypatch):
    text = (REPO / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(REPO)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert (namespace["evaluation"].valid, namespace["evaluation"].metrics.owned_kept) == (True, 5)
    assert namespace["kafka"].metrics.owned_kept == 5
    assert os.path.exists(REPO / "run") and os.access(REPO / "run", os.X_OK)


def test_every_figure_the_readme_quotes_is_the_codes(tmp_path):
    import gzip
    import inspect
    import json
    import tomllib

    from optimizer import load_problem, solve
    from optimizer.activity import FIRST_SECONDS
    from optimizer.cli import DEFAULT_TIME_LIMIT, READER_GONE
    from optimizer.errors import ExitCode
    from optimizer.kafka import sandbox
    from optimizer.model.releases import DEFAULT_KAFKA_VERSION, NEWEST_PATCH
    from optimizer.text import whole
    from tests.docs_figures import unchecked_numbers

    text = (REPO / "README.md").read_text()
    with gzip.open(REPO / "examples" / "fleet" / "fleet.jsonl.gz", "rt") as lines:
        fleet = sum(1 for line in lines if line.strip())
    audited = json.loads((REPO / "bench" / "results" / "optimality.json").read_text())["problems"]
    python = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"].removeprefix(">=")
    pom = (REPO / "jvm" / "pom.xml").read_text()
    java = re.search(r"<maven.compiler.release>(\d+)<", pom)[1]
    kafka = re.search(r"<kafka.version>([\d.]+)<", pom)[1]
    defaults = inspect.signature(sandbox.start).parameters
    words = {3: "three", 9: "nine"}
    kept = {
        strategy: solve(load_problem(f"examples/kip54/example2-c0-removed-after-{strategy}.problem.yaml"), solver="kafka").metrics.owned_kept
        for strategy in ("sticky", "roundrobin")
    }
    threads = [c.threads for c in load_problem("examples/kip925/three-clients-1-2-3-threads.problem.yaml").clients]
    nine = load_problem("examples/kip708/nine-nodes.problem.yaml").clients
    lines_ = list(NEWEST_PATCH)
    claims = [
        f"audited against enumeration on {audited:,} small problems",
        f"On a machine with Python {python}, Java {java} and Maven",
        f"Kafka {kafka}'s own jars",
        f"on 127.0.0.1 ({words[defaults['brokers'].default]} brokers in racks {', '.join(defaults['racks'].default)},",
        f"The main job solves the {fleet} problems",
        f"Exit codes: {ExitCode.OK:d} success, {ExitCode.INVALID_INPUT:d} invalid input",
        f"{ExitCode.USAGE:d} usage error",
        f"{ExitCode.NO_SOLUTION:d} no feasible solution",
        f"{ExitCode.INTERNAL:d} internal error",
        f"{READER_GONE} when the output's reader stops reading",
        f"{whole(DEFAULT_TIME_LIMIT)} s unless given",
        f"past {whole(FIRST_SECONDS)} s",
        f"three clients with {', '.join(map(str, threads[:-1]))} and {threads[-1]} threads",
        f"sticky keeping {kept['sticky']} partitions where round robin keeps {kept['roundrobin']} in",
        f"{words[len(nine)]} nodes over {words[len({c.tags['cluster'] for c in nine})]} clusters and "
        f"{words[len({c.tags['zone'] for c in nine})]} zones",
    ]
    # Not figures: Kafka's release facts (the 4.4 stall the rollout avoids, the 4.x line's protocols), a name.
    assert unchecked_numbers(text, claims, allowed=["Kafka 4.4 stall", "Kafka 4.x's", "example 2."]) == ([], [])
    # In code spans: the default release and the lines the project reproduces.
    first, last = lines_[0], lines_[-2]
    assert f"`kafka.version` (default `{DEFAULT_KAFKA_VERSION}`; `{first[0]}.{first[1]}` to `{last[0]}.{last[1]}`" in " ".join(text.split())

    # The console tour's outputs, as printed.
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "format: kafka-assignment-problem/v1\nkind: streams\nconfig: {rack.aware.assignment.strategy: cheapest}\n"
        "clients: [{id: x}, {id: a, threads: 0}, {id: a}]\ntasks: []\n"
    )
    tour = re.search(r"```console\n(.*?)```", text, re.S)[1]
    for command, shown in re.findall(r"^\$ (kafka-assign validate \S+).*\n((?:[^$\n].*\n)+)", tour, re.M):
        path = command.split()[-1]
        result = subprocess.run(
            [sys.executable, "-m", "optimizer", *command.split()[1:-1], str(broken) if path == "broken.yaml" else path],
            cwd=tmp_path if path == "broken.yaml" else REPO, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"},
        )  # fmt: skip
        printed = (result.stdout + result.stderr).replace(str(broken), "broken.yaml")
        assert printed.splitlines() == shown.splitlines(), command
