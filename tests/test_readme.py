"""The README's Python example runs as written and shows what it says."""

from __future__ import annotations

import os
import re

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
