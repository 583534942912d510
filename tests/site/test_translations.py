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


def _po_entries(path: Path) -> dict[str, str]:
    entries: dict[str, str] = {}
    msgid = msgstr = None
    current = None
    fuzzy = False

    def flush():
        if msgid and not fuzzy:
            entries[msgid] = msgstr or ""

    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if line.startswith("#,") and "fuzzy" in line:
            fuzzy = True
        elif line.startswith("msgid "):
            msgid, current = ast.literal_eval(line[6:]), "id"
        elif line.startswith("msgstr "):
            msgstr, current = ast.literal_eval(line[7:]), "str"
        elif line.startswith("msgstr[0] "):
            # A plural entry: the singular form stands for the entry.
            msgstr, current = ast.literal_eval(line[10:]), "str"
        elif line.startswith("msgstr["):
            current = "other-plural"
        elif line.startswith("msgid_plural "):
            current = "plural-id"
        elif line.startswith('"'):
            if current == "id":
                msgid += ast.literal_eval(line)
            elif current == "str":
                msgstr += ast.literal_eval(line)
        elif not line.strip():
            flush()
            msgid = msgstr = current = None
            fuzzy = False
    return entries


# Language names are shown in their own language on purpose.
UNTRANSLATED = {"Español", "English"}


def test_every_english_entry_is_translated():
    missing = [m for m, s in _po_entries(EN_PO).items() if not s and m not in UNTRANSLATED]
    assert missing == []


def test_compiled_english_catalogue_matches_the_po_file():
    with EN_MO.open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    plural_ids = set(re.findall(r'^msgid "(.*)"\nmsgid_plural', EN_PO.read_text(encoding="utf-8"), re.M))
    for msgid, msgstr in _po_entries(EN_PO).items():
        if msgstr and msgid not in plural_ids:
            assert compiled.gettext(msgid) == msgstr, msgid


def test_every_template_string_has_an_english_entry():
    entries = _po_entries(EN_PO)
    pattern = re.compile(r"""\{%\s*translate\s+(["'])(.+?)\1""")
    missing = []
    for template in (ROOT / "templates").rglob("*.html"):
        for match in pattern.finditer(template.read_text(encoding="utf-8")):
            if match.group(2) not in entries:
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
