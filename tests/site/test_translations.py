"""The English catalogue is complete and its compiled form is up to date.

A fresh machine without gettext tools must show English, so the compiled .mo
is committed; these tests catch a .po edited without recompiling, and a
template string added without an English translation.
"""

import ast
import gettext
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EN_PO = ROOT / "locale" / "en" / "LC_MESSAGES" / "django.po"
EN_MO = EN_PO.with_suffix(".mo")


def _po_entries(path: Path) -> dict:
    """Each entry's translation by its msgid, and by ``(context, msgid)`` for an
    entry with a ``msgctxt`` (``{% translate … context … %}``, ``pgettext``).
    A plural entry stands by its singular form; fuzzy entries are left out."""
    entries: dict = {}
    # The keyword that starts each part of an entry; a quoted line continues the last one.
    starts = {"msgctxt ": "context", "msgid ": "id", "msgstr ": "str", "msgstr[0] ": "str"}
    entry: dict[str, str] = {}
    current = None
    fuzzy = False
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        keyword = next((k for k in starts if line.startswith(k)), None)
        if line.startswith("#,") and "fuzzy" in line:
            fuzzy = True
        elif keyword:
            current = starts[keyword]
            entry[current] = ast.literal_eval(line[len(keyword) :])
        elif line.startswith(("msgstr[", "msgid_plural ")):
            current = None  # the other forms: the singular stands for the entry
        elif line.startswith('"') and current:
            entry[current] += ast.literal_eval(line)
        elif not line.strip():
            if entry.get("id") and not fuzzy:
                key = (entry["context"], entry["id"]) if "context" in entry else entry["id"]
                entries[key] = entry.get("str", "")
            entry, current, fuzzy = {}, None, False
    return entries


# Language names are shown in their own language on purpose.
UNTRANSLATED = {"Español", "English"}


def test_every_english_entry_is_translated():
    missing = [m for m, s in _po_entries(EN_PO).items() if not s and m not in UNTRANSLATED]
    assert missing == []


def test_an_entry_with_a_context_is_read_with_it(tmp_path):
    po = tmp_path / "django.po"
    po.write_text('msgctxt "role"\nmsgid "Director"\nmsgstr "GM"\n\nmsgid "Director"\nmsgstr "Director"\n')
    assert _po_entries(po) == {("role", "Director"): "GM", "Director": "Director"}


def test_compiled_english_catalogue_matches_the_po_file():
    with EN_MO.open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    plural_ids = set(re.findall(r'^msgid "(.*)"\nmsgid_plural', EN_PO.read_text(encoding="utf-8"), re.M))
    for key, msgstr in _po_entries(EN_PO).items():
        context, msgid = key if isinstance(key, tuple) else (None, key)
        if msgstr and msgid not in plural_ids:
            found = compiled.pgettext(context, msgid) if context is not None else compiled.gettext(msgid)
            assert found == msgstr, key


def test_every_template_string_has_an_english_entry():
    entries = _po_entries(EN_PO)
    pattern = re.compile(r"""\{%\s*translate\s+(["'])(.+?)\1(?:\s+context\s+(["'])(.+?)\3)?""")
    missing = []
    for template in (ROOT / "templates").rglob("*.html"):
        for match in pattern.finditer(template.read_text(encoding="utf-8")):
            key = (match.group(4), match.group(2)) if match.group(4) else match.group(2)
            if key not in entries:
                missing.append(f"{template.relative_to(ROOT)}: {match.group(2)}")
    assert missing == []


def test_every_plural_form_is_translated():
    # A long msgstr is wrapped as ``msgstr[1] ""`` followed by "…" lines:
    # only a form with no continuation line is empty.
    empty = re.findall(
        r'^msgid "(.*)"\nmsgid_plural .*\n(?:msgstr\[\d\] .*\n(?:".*\n)*)*msgstr\[\d\] ""\n(?!")',
        EN_PO.read_text(encoding="utf-8") + "\n",
        re.M,
    )
    assert empty == []
