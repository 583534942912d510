"""A release's shared-cache keys change with its code (hitos_site/release.py)."""

from hitos_site.release import fingerprint


def _site(tmp_path, template: str):
    (tmp_path / "templates").mkdir(exist_ok=True)
    (tmp_path / "templates" / "base.html").write_text(template)
    (tmp_path / "table").mkdir(exist_ok=True)
    (tmp_path / "table" / "views.py").write_text("x = 1\n")
    return tmp_path


def test_the_fingerprint_is_stable_and_moves_with_a_template_or_the_code(tmp_path):
    site = _site(tmp_path, "<p>uno</p>")
    first = fingerprint(site)
    assert fingerprint(site) == first
    (site / "templates" / "base.html").write_text("<p>dos</p>")
    second = fingerprint(site)
    assert second != first
    (site / "table" / "views.py").write_text("x = 2\n")
    assert fingerprint(site) not in (first, second)


def test_files_that_are_not_code_do_not_move_it(tmp_path):
    site = _site(tmp_path, "<p>uno</p>")
    first = fingerprint(site)
    (site / "table" / "notes.log").write_text("ruido")
    (site / "var").mkdir()
    (site / "var" / "db.sqlite3").write_text("datos")
    assert fingerprint(site) == first
