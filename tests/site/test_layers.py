"""The import contract: lower layers never import higher ones (ARCHITECTURE.md,
"Layers"; issue 12).

    rules (pure) ← accounts ← campaigns ← {rolls, sheets} ← table ← systems/* ← demo ← hitos_site

A module may import its own package and packages of lower layers only; the
two packages of one layer (rolls, sheets) never import each other. Every
import counts, module-level or inside a function. ``hitos_site.htmx`` and
``hitos_site.env`` are shared helpers every app may use: they import no app.

``KNOWN`` listed the imports that broke the order while the code was reshaped
in stages (issue 12); each stage removed some, and the list could only
shrink. It is empty now, and no entry may come back.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {
    "rules": 0,
    "accounts": 1,
    "campaigns": 2,
    "rolls": 3,
    "sheets": 3,
    "table": 4,
    "systems": 5,
    "demo": 6,
    "hitos_site": 7,
}
SHARED_HELPERS = {"hitos_site.htmx", "hitos_site.env"}

# (importing module, imported module) pairs still against the order.
KNOWN: set[tuple[str, str]] = set()  # empty since issue 12: keep it so


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> set[str]:
    """Every absolute module the file imports, wherever the import statement is;
    relative imports stay inside their own package and are allowed."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
            "__import__",
            "import_module",
        ):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in LAYERS
        if (ROOT / package).is_dir()
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _violations() -> set[tuple[str, str]]:
    found = set()
    for module, path in _modules().items():
        package = module.split(".")[0]
        for imported in _imports(path):
            target = imported.split(".")[0]
            if target not in LAYERS or target == package:
                continue
            if module in SHARED_HELPERS:
                found.add((module, imported))  # a shared helper imports no app at all
            elif imported in SHARED_HELPERS or any(imported.startswith(h + ".") for h in SHARED_HELPERS):
                continue
            elif LAYERS[target] >= LAYERS[package]:
                found.add((module, imported))
    return found


def test_the_contract_reads_every_app():
    modules = _modules()
    for package in ("rules", "accounts", "campaigns", "rolls", "sheets", "table", "systems", "hitos_site"):
        assert any(m.split(".")[0] == package for m in modules), package
    assert len(modules) > 100


def test_no_module_imports_a_higher_layer_except_the_known_ones():
    new = sorted(_violations() - KNOWN)
    assert new == [], "imports against the layer order (ARCHITECTURE.md, Layers): " + repr(new)


def test_the_known_exceptions_only_shrink():
    gone = sorted(KNOWN - _violations())
    assert gone == [], "these imports are gone: take them off KNOWN in tests/site/test_layers.py: " + repr(gone)


def test_the_table_names_no_game():
    """Issue 12: the table asks the campaign's system through the registry
    and never names one, in its code or its templates."""
    named = re.compile(r"\bhitos\b(?!_site)", re.IGNORECASE)
    files = [*(ROOT / "table").rglob("*.py"), *(ROOT / "templates" / "table").rglob("*.html")]
    assert len(files) > 10
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if named.search(line)
    ]
    assert found == []


def test_the_checker_sees_lazy_imports(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def later():\n"
        "    from sheets.models import Character\n"
        "    import rolls.services\n"
        "    return importlib.import_module('table.systems')\n",
        encoding="utf-8",
    )
    assert _imports(sample) == {"sheets.models", "rolls.services", "table.systems"}


# HITOS's vocabulary, as parts of identifiers (``gm_drama_points``,
# ``SceneAspect``) and as words of the templates.
HITOS_WORDS = {
    "drama",
    "aspect",
    "aspects",
    "activation",
    "activations",
    "horror",
    "meter",
    "meters",
    "fortaleza",
    "reflejos",
    "voluntad",
    "intelecto",
    "degeneracion",
    "combat",
    "hitos",
}
HITOS_TEMPLATE_WORDS = re.compile(
    r"\b(dramátic\w*|aspecto\w*|activaci\w*|horror|medidor\w*|fortaleza|reflejos|degeneraci\w*)\b", re.IGNORECASE
)


def _identifier_parts(path: Path) -> set[str]:
    names = {node.id for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Name)}
    names |= {
        node.attr for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Attribute)
    }
    parts = set()
    for name in names:
        for part in re.split(r"_|(?<=[a-z])(?=[A-Z])", name):
            parts.add(part.lower())
    return parts


def test_the_forum_and_the_character_core_know_no_game():
    """Issue 12: ``campaigns`` and ``sheets`` hold no HITOS column, model or
    word: what a game adds to them comes through their extension points."""
    found = []
    for app in ("campaigns", "sheets"):
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            hits = _identifier_parts(path) & HITOS_WORDS
            found += [f"{path.relative_to(ROOT)}: {sorted(hits)}"] if hits else []
        for path in (ROOT / "templates" / app).rglob("*.html"):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if HITOS_TEMPLATE_WORDS.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}")
    assert found == []
