"""Goal plugins: hooks documented, entry points loaded, duplicates and the allowlist, plugins
recorded in solutions, and the example third-party package installed and used from the CLI."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

import optimizer
from goals.builtin import BUILTIN_GOALS
from optimizer import PluginError, load_problem, solve
from optimizer.cli import cli
from plugins import hookspecs
from plugins.manager import ALLOWLIST_ENV, DEFAULT_PLUGINS, load_plugins, plugins, reset
from tests.conftest import EXAMPLES, REPO

SCALING_OUT = EXAMPLES / "kip441" / "scaling-out-1.problem.yaml"


@pytest.fixture
def fresh_plugins(monkeypatch):
    """Plugins reloaded for the test and again after it (installed ones stay out of the others)."""
    monkeypatch.delenv(ALLOWLIST_ENV, raising=False)
    reset()
    yield
    reset()


def fake_distribution(root, name: str, module_source: str) -> None:
    """A module `name` on sys.path with an installed distribution declaring it as plugin `name`."""
    (root / f"{name}.py").write_text(textwrap.dedent(module_source))
    info = root / f"{name}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[kafka_assignment_optimizer]\n{name} = {name}\n")


def test_every_hook_is_typed_and_documented():
    hooks = [f for _, f in inspect.getmembers(hookspecs, inspect.isfunction) if hasattr(f, "kafka_assignment_optimizer_spec")]
    assert [h.__name__ for h in hooks] == ["register_goals"]
    for hook in hooks:
        signature = inspect.signature(hook)
        assert all(p.annotation is not inspect.Parameter.empty for p in signature.parameters.values()), hook.__name__
        assert signature.return_annotation is not inspect.Signature.empty, hook.__name__
        doc = inspect.getdoc(hook) or ""
        assert "When:" in doc and "Returns:" in doc, hook.__name__


def test_built_in_goals_register_through_the_hook(fresh_plugins):
    loaded = plugins()
    assert [p.name for p in loaded.loaded] == ["builtin"]
    assert loaded.goals.names() == sorted(g.name for g in BUILTIN_GOALS)
    assert set(loaded.goals.owners.values()) == {"builtin"}


def test_a_duplicate_goal_name_fails_naming_both_plugins(tmp_path, monkeypatch, fresh_plugins):
    fake_distribution(
        tmp_path,
        "rebalancer",
        """
        from optimizer import Goal, hookimpl

        class MyBalance(Goal):
            name = "balance"

        @hookimpl
        def register_goals(registry):
            registry.add(MyBalance)
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError) as error:
        load_plugins()
    assert "'balance'" in str(error.value) and "'builtin'" in str(error.value) and "'rebalancer'" in str(error.value)
    # The allowlist keeps it out ...
    monkeypatch.setenv(ALLOWLIST_ENV, "")
    assert [p.name for p in load_plugins().loaded] == ["builtin"]
    # ... or names it, and the conflict is back; the CLI reports it without a traceback.
    monkeypatch.setenv(ALLOWLIST_ENV, "rebalancer")
    reset()
    result = CliRunner().invoke(cli, ["goals"])
    assert result.exit_code == 2 and "registered by two plugins" in result.output


def test_a_plugin_that_fails_to_import_is_named(tmp_path, monkeypatch, fresh_plugins):
    fake_distribution(tmp_path, "broken", "raise ImportError('missing dependency: left-pad')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match=r"plugin 'broken' .* failed to load: missing dependency: left-pad"):
        load_plugins()


def test_a_misspelt_hook_is_an_error_naming_the_plugin(tmp_path, monkeypatch, fresh_plugins):
    fake_distribution(
        tmp_path,
        "typo",
        """
        from optimizer import hookimpl

        @hookimpl
        def register_goal(registry):  # the hook is register_goals
            pass
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match=r"plugin 'typo'.*register_goal"):
        load_plugins()
    result = CliRunner().invoke(cli, ["goals"])
    assert result.exit_code == 2 and "register_goal" in result.output


def test_the_built_in_goals_are_loaded_by_module_name_with_the_packages_version():
    # plugins is the bottom layer: the built-in goals are named, not imported (tests/test_layers.py
    # checks that the layer imports nothing above it).
    assert DEFAULT_PLUGINS == {"builtin": "goals.builtin"}
    loaded = load_plugins()
    assert loaded.loaded[0].name == "builtin" and loaded.loaded[0].version == optimizer.__version__


def test_every_solution_records_the_plugins_loaded(fresh_plugins):
    problem = load_problem(SCALING_OUT)
    for solver in ("exact", "kafka", "kip925"):
        plugins_recorded = solve(problem, solver=solver).solver.plugins
        assert [(p.name, bool(p.version)) for p in plugins_recorded] == [("builtin", True)], solver


def test_the_example_goal_package_installs_and_solves_from_the_cli(tmp_path, fresh_plugins):
    target = tmp_path / "site"
    source = tmp_path / "drain-goal"  # pip builds in the source tree: keep the repository clean
    shutil.copytree(REPO / "docs" / "examples" / "drain-goal", source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), str(source)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(REPO)])}
    env.pop(ALLOWLIST_ENV, None)

    def cli_json(*args):
        run = subprocess.run([sys.executable, "-m", "optimizer", *args], capture_output=True, text=True, env=env, check=False)
        assert run.returncode == 0, run.stdout + run.stderr
        return json.loads(run.stdout)

    listed = cli_json("goals", "--json")
    assert {"name": "drain", "version": "1.0.0"} in listed["plugins"]
    assert next(g for g in listed["goals"] if g["name"] == "drain_clients")["plugin"] == "drain"

    solution = cli_json("solve", str(SCALING_OUT), "--goals", "balance,drain_clients=I1,stickiness", "--no-warmups", "--json")
    goals = {g["name"]: g for g in solution["goals"]}
    # Balance leaves every client two of the six copies (three actives, three standbys): I1 keeps two.
    assert goals["drain_clients"]["value"] == 2 and goals["drain_clients"]["status"] == "optimal"
    held = solution["assignment"]["I1"]
    assert len(held["active"]) + len(held["standby"]) == 2
    assert {"name": "drain", "version": "1.0.0"} in solution["solver"]["plugins"]

    # The package's own test: the goal against every back-end, with the shipped conformance kit.
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(source / "tests")],
        capture_output=True, text=True, env=env, cwd=source, check=False,
    )  # fmt: skip
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]

    # The allowlist can leave it out: the goal is then unknown, a usage error.
    env[ALLOWLIST_ENV] = ""
    run = subprocess.run(
        [sys.executable, "-m", "optimizer", "solve", str(SCALING_OUT), "--goals", "drain_clients=I1"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert run.returncode == 2 and "unknown goal 'drain_clients'" in run.stdout + run.stderr


def test_goal_arguments_are_checked():
    result = CliRunner().invoke(cli, ["solve", str(SCALING_OUT), "--goals", "balance,movement_budget"])
    assert result.exit_code == 2 and "needs the number of moves allowed" in result.output
    result = CliRunner().invoke(cli, ["solve", str(SCALING_OUT), "--goals", "balance,balance"])
    assert result.exit_code == 2 and "listed twice" in result.output
    result = CliRunner().invoke(cli, ["solve", str(SCALING_OUT), "--goals", "balance,stickyness"])
    assert result.exit_code == 2 and "unknown goal 'stickyness'" in result.output


def test_the_goals_command_lists_built_in_goals():
    result = CliRunner().invoke(cli, ["goals", "--json"])
    assert result.exit_code == 0
    listed = {g["name"]: g for g in json.loads(result.output)["goals"]}
    assert listed["balance"]["hard"] and listed["movement_budget"]["hard"]
    assert listed["kip925_cost"]["kinds"] == ["streams"] and listed["stickiness"]["kinds"] == ["streams", "consumer"]


def test_a_hook_with_the_wrong_arguments_or_a_failing_hook_is_the_plugins_error(tmp_path, monkeypatch, fresh_plugins):
    fake_distribution(tmp_path, "wrongargs", "from optimizer import hookimpl\n\n@hookimpl\ndef register_goals(goals):\n    pass\n")
    fake_distribution(tmp_path, "failing", "from optimizer import hookimpl\n\n@hookimpl\ndef register_goals(registry):\n    raise KeyError('zone')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(ALLOWLIST_ENV, "wrongargs")
    with pytest.raises(PluginError, match=r"plugin 'wrongargs'.*goals"):
        load_plugins()
    monkeypatch.setenv(ALLOWLIST_ENV, "failing")
    with pytest.raises(PluginError, match="plugin 'failing' failed in register_goals: KeyError"):
        load_plugins()
    reset()
    result = CliRunner().invoke(cli, ["goals"])
    assert result.exit_code == 2 and "failed in register_goals" in result.output
