"""Nothing under rules/ imports Django (ARCHITECTURE: "rules/ pure Python, no Django")."""

import ast
import json
import subprocess
import sys
from pathlib import Path

RULES = Path(__file__).resolve().parents[2] / "rules"
MODULES = sorted(RULES.rglob("*.py"))


def imported_names(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__" and node.args:
            argument = node.args[0]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                yield argument.value


def test_the_rules_package_has_modules_to_check():
    names = {path.stem for path in MODULES}
    assert {"dice", "hitos", "meters", "probability"} <= names


def test_no_module_under_rules_imports_django_in_its_source():
    offenders = {
        str(path.relative_to(RULES)): name
        for path in MODULES
        for name in imported_names(path)
        if name == "django" or name.startswith("django.")
    }
    assert offenders == {}


def test_importing_every_rules_module_loads_no_django():
    modules = ["rules." + ".".join(path.relative_to(RULES).with_suffix("").parts) for path in MODULES]
    modules = [m.removesuffix(".__init__") for m in modules]
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=RULES.parent,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(RULES.parent), "PATH": ""},
    )
    assert json.loads(completed.stdout) == []
