"""The test suite's own shape: what more than one test file uses lives in tests/support/ and is imported from
there, never from a conftest.py and never written again in a test module; a conftest.py holds fixtures and
hooks only; and a declared mark marks the tests it names."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.markers import FOLDER_MARKS

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SUPPORT = TESTS / "support"


def _modules() -> list[Path]:
    """Every Python file of the suite but the support modules and Mycel's own data."""
    return sorted(
        path
        for path in TESTS.rglob("*.py")
        if not path.is_relative_to(SUPPORT) and not path.is_relative_to(TESTS / "data")
    )


@functools.cache  # one parse of each file for every check here
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"


def _imported_modules(node: ast.AST) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return ["." * node.level + (node.module or "")]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return []


def test_no_module_imports_from_a_conftest() -> None:
    found = [
        f"{_where(path, node)} imports from {module}"
        for path in _modules()
        if path.name != "conftest.py"
        for node in ast.walk(_tree(path))
        for module in _imported_modules(node)
        if re.search(r"(^|\.)conftest$", module)
    ]
    assert found == [], "a helper used by more than one file belongs in tests/support/"


def _support_names() -> set[str]:
    names = set()
    for path in SUPPORT.glob("*.py"):
        for node in _tree(path).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
    return names


def test_no_module_writes_a_support_helper_again() -> None:
    # `_cli_json` was the private name of ten copies of tests.support.cli.cli_json.
    taken = _support_names() | {"_cli_json"}
    found = [
        f"{_where(path, node)} defines {node.name} again"
        for path in _modules()
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name in taken
    ]
    assert found == [], "import it from tests/support/ instead"


def _calls(function: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            names.add(name)
    return names


def test_no_helper_runs_the_cli_and_parses_its_output_itself() -> None:
    # The same copy under any name: a helper calling the CLI's main() and json.loads. A test may do it in line.
    found = [
        f"{_where(path, node)} {node.name} runs main() and json.loads: use tests.support.cli"
        for path in _modules()
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.FunctionDef)
        and not node.name.startswith("test_")
        and {"main", "json.loads"} <= _calls(node)
    ]
    assert found == []


def _is_fixture(node: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)


def test_a_conftest_holds_fixtures_and_hooks_only() -> None:
    found = []
    for path in TESTS.rglob("conftest.py"):
        for node in _tree(path).body:
            if isinstance(node, ast.ClassDef):
                found.append(f"{_where(path, node)} class {node.name}")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if not (_is_fixture(node) or node.name.startswith(("pytest_", "_"))):
                    found.append(f"{_where(path, node)} def {node.name}")
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    name = ast.unparse(target)
                    # pytestmark in a conftest.py marks nothing; a public constant is a helper
                    if name == "pytestmark" or not name.startswith("_"):
                        found.append(f"{_where(path, node)} {name} =")
    assert found == [], (
        "a conftest.py keeps fixtures, hooks and their private helpers; move the rest to tests/support/"
    )


def _collect(*args: str) -> tuple[list[str], str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout[-2000:] + done.stderr[-2000:]  # 5: nothing selected
    return [line for line in done.stdout.splitlines() if "::" in line], done.stdout


def test_every_declared_mark_is_given_by_a_folder() -> None:
    # Ours, in pyproject.toml (pytestconfig's list holds the plugins' too)
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    declared = {line.split(":")[0].strip() for line in markers}
    assert declared == set(FOLDER_MARKS), "say which tests a new mark marks (tests/support/markers.py)"


@pytest.mark.parametrize("mark", sorted(FOLDER_MARKS))
def test_a_folder_mark_selects_exactly_the_tests_under_its_folder(mark: str) -> None:
    folder = f"{FOLDER_MARKS[mark].relative_to(ROOT)}/"
    selected, _ = _collect("-m", mark)  # over the whole suite
    assert selected, f"-m {mark} selects nothing"
    assert [t for t in selected if not t.startswith(folder)] == []
    left, summary = _collect("-m", f"not {mark}", folder)
    assert left == []
    deselected = re.search(r"(\d+) deselected", summary)
    assert deselected is not None and int(deselected.group(1)) == len(selected), summary
