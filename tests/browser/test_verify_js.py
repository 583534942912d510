"""The in-page verifier (static/js/verify-roll.js) in a real Chromium, against
the specification's own vectors (roll-verification.md §5: T1–T6, T10–T13).

Bundles are built here from the published bytes and signatures, never from the
Python producer, so the browser side is checked against the spec on its own.
Tampered variants are re-signed with the T0 test key (and sealed ones get a
fresh commitment where the case needs it), so each fails for the reason under
test and not merely for a broken signature; every failure asserts its reason.

The page is tests/browser/verify_js_urls.py: the permalink page's contract
(the bundle in ``#roll-bundle``, the ``#inpage-check`` box) served by the real
middleware, CSP included, from localhost (a secure context for WebCrypto).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from playwright.sync_api import Locator, Page, expect

from tests.browser import rollog_vectors as v
from tests.browser.verify_js_urls import LABELS, PAGES

pytestmark = [pytest.mark.browser, pytest.mark.urls("tests.browser.verify_js_urls")]

SIGNING_KEY = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(v.SIGNING_KEY_HEX))
RESULTS = re.compile(r"^(ok|sealed|fail|unsupported)$")
DROP = object()  # edited(..., field=DROP) removes the field
UNSET = object()

# --- building bundles ------------------------------------------------------------


def canonical(entry: dict) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def sign(entry: dict | str, key: Ed25519PrivateKey = SIGNING_KEY) -> v.Signed:
    """Hash, sign and name an entry as §3.5 does (a str is signed as given, canonical or not)."""
    text = entry if isinstance(entry, str) else canonical(entry)
    digest = hashlib.sha256(b"rollog/v1/entry\n" + text.encode("utf-8")).digest()
    return v.Signed(
        entry=text,
        hash=digest.hex(),
        sig=key.sign(b"rollog/v1/sig\n" + digest).hex(),
        permalink=base64.b32encode(digest[:15]).decode("ascii").lower(),
    )


def changed(text: str, **changes) -> dict:
    entry = json.loads(text)
    for name, value in changes.items():
        if value is DROP:
            del entry[name]
        else:
            entry[name] = value
    return entry


def edited(signed: v.Signed, **changes) -> v.Signed:
    """A vector entry with fields changed, re-signed with the test key."""
    return sign(changed(signed.entry, **changes))


def opened(opening: v.Opening, **changes) -> str:
    """A sealed body with fields changed (canonical bytes, commitment not updated)."""
    return canonical(changed(opening.body, **changes))


def commitment(body: str) -> str:
    return hashlib.sha256(b"rollog/v1/sealed\n" + body.encode("utf-8")).hexdigest()


def resealed(outer: v.Signed, body: str) -> v.Signed:
    """The outer entry committing to ``body`` instead, re-signed: only the body's own checks can fail."""
    return edited(outer, commitment=commitment(body))


def ref(signed: v.Signed, opening: str | None = None) -> dict:
    out = {"entry_b64": b64(signed.entry), "sig": signed.sig}
    if opening is not None:
        out["opening_b64"] = b64(opening)
    return out


def bundle(signed: v.Signed, epoch_open: v.Signed, parent: dict | None = None, opening=UNSET) -> dict:
    """The §3.10 bundle; ``opening`` (body text or None) only for a sealed entry."""
    out = {
        "format": "rollog/v1",
        "permalink": signed.permalink,
        "entry_hash": signed.hash,
        "entry_b64": b64(signed.entry),
        "sig": signed.sig,
        "entry": json.loads(signed.entry),
        "epoch_open": ref(epoch_open),
        "parent": parent,
        "children": [],
        "head": ref(signed),
        "public_key": v.PUBLIC_KEY_HEX,
    }
    if opening is not UNSET:
        out["opening_b64"] = None if opening is None else b64(opening)
    return out


def t12_open(body: str | None = None, outer: v.Signed | None = None) -> dict:
    body = v.T12_OPENING.body if body is None else body
    return bundle(outer or v.T12, v.SEQ9, opening=body)


def t12_resealed(**changes) -> dict:
    """T12 opened with its body changed and a matching commitment (outer entry re-signed)."""
    body = opened(v.T12_OPENING, **changes)
    return t12_open(body, resealed(v.T12, body))


def t13_open(parent_opening: str | None = v.T12_OPENING.body) -> dict:
    parent = ref(v.T12, opening=parent_opening)
    return bundle(v.T13, v.SEQ9, parent=parent, opening=v.T13_OPENING.body)


# --- derivation-only vectors turned into signed entries ---------------------------
# T10b gives no log entry: its key (bytes 00…1f) becomes slot 1 of a test
# epoch whose anchor is SHA-256 of it, signed here with the test key.

TEST_SEED = bytes(range(32))
TEST_EPOCH = sign(
    {
        "anchor": hashlib.sha256(TEST_SEED).hexdigest(),
        "campaign": "test",
        "epoch": 1,
        "key": v.PUBLIC_KEY_HEX,
        "kind": "epoch_open",
        "length": 8,
        "prev": "0" * 64,
        "seq": 0,
        "time": "2025-01-15T19:00:00Z",
        "v": 1,
    }
)


def roll_entry(spec: str, client_seed: str, dice: list[int]) -> v.Signed:
    return sign(
        changed(
            v.T10.entry,
            campaign="test",
            seq=3,
            epoch_index=1,
            seed=TEST_SEED.hex(),
            client_seed=client_seed,
            spec=spec,
            dice=dice,
            prev="0" * 64,
            seen="0" * 64,
        )
    )


def derive(seed: bytes, message: str, spec: str, cap: int = 100) -> list[int]:
    """§3.4 and §3.4b as fixed before T10, in Python, for the 100-dice cap case."""
    buffer = bytearray()
    block = 0

    def draw(faces: int) -> int:
        nonlocal block
        size = 1
        while 256**size < faces:
            size += 1
        limit = 256**size - 256**size % faces
        while True:
            while len(buffer) < size:
                buffer.extend(hmac.new(seed, f"{message}:{block}".encode(), hashlib.sha256).digest())
                block += 1
            value = int.from_bytes(buffer[:size], "big")
            del buffer[:size]
            if value < limit:
                return value % faces + 1

    kinds = [
        (int(faces.rstrip("!")), faces.endswith("!"))
        for count, faces in (term.split("d") for term in spec.split("+"))
        for _ in range(int(count))
    ]
    dice = [draw(faces) for faces, _ in kinds]
    position = 0
    while position < len(dice) and len(dice) < cap:
        faces, explodes = kinds[position]
        if explodes and dice[position] == faces:
            kinds.append((faces, explodes))
            dice.append(draw(faces))
        position += 1
    return dice


CAP_SPEC = "99d2!"
CAP_SEED = "cap-100"
CAP_MESSAGE = f"rollog/v1:test:3:{CAP_SEED}:{CAP_SPEC}:-:-"


def test_the_python_reading_reproduces_t10_and_t10b():
    # The helper above must agree with the spec before it can judge the script.
    t10 = json.loads(v.T10.entry)
    assert derive(bytes.fromhex(t10["seed"]), "rollog/v1:hitos-demo:6:t10-2:2d6!:-:-", "2d6!") == [3, 6, 3]
    assert derive(TEST_SEED, "rollog/v1:test:3:t10b-766:2d6!+1d8:-:-", "2d6!+1d8") == [6, 5, 8, 6, 6, 2]
    capped = derive(TEST_SEED, CAP_MESSAGE, CAP_SPEC)
    assert len(capped) == 100 and len(derive(TEST_SEED, CAP_MESSAGE, CAP_SPEC, cap=10_000)) > 100


def forged() -> dict:
    """A better roll signed by someone else, whose bundle names that someone's key (§4 #16)."""
    forger = Ed25519PrivateKey.generate()
    out = bundle(sign(changed(v.T2.entry, dice=[10, 10, 10]), forger), v.T1)
    out["public_key"] = forger.public_key().public_bytes_raw().hex()
    return out


# --- the cases -------------------------------------------------------------------

T10B_DICE = [6, 5, 8, 6, 6, 2]

CASES: list[tuple[str, Callable[[], dict], str, str]] = [
    # The spec's own entries verify.
    ("T2 roll", lambda: bundle(v.T2, v.T1), "ok", ""),
    ("T3 roll with rejected bytes", lambda: bundle(v.T3, v.T1), "ok", ""),
    ("T5 reroll", lambda: bundle(v.T5, v.T1, parent=ref(v.T4)), "ok", ""),
    ("T6 5d6 pool", lambda: bundle(v.T6, v.T1), "ok", ""),
    ("T10 exploding 2d6!", lambda: bundle(v.T10, v.T1), "ok", ""),
    ("T10b explosion order", lambda: bundle(roll_entry("2d6!+1d8", "t10b-766", T10B_DICE), TEST_EPOCH), "ok", ""),
    (
        "explosions stop at 100 dice",
        lambda: bundle(roll_entry(CAP_SPEC, CAP_SEED, derive(TEST_SEED, CAP_MESSAGE, CAP_SPEC)), TEST_EPOCH),
        "ok",
        "",
    ),
    ("T11 seq 7 roll", lambda: bundle(v.T11_7, v.T1), "ok", ""),
    ("T11 seq 8 extend", lambda: bundle(v.T11_8, v.T1, parent=ref(v.T11_7)), "ok", ""),
    ("T12 sealed with opening", t12_open, "ok", ""),
    ("T12 sealed without opening", lambda: bundle(v.T12, v.SEQ9, opening=None), "sealed", ""),
    ("T13 sealed reroll with openings", t13_open, "ok", ""),
    ("T13 sealed reroll without opening", lambda: bundle(v.T13, v.SEQ9, opening=None), "sealed", ""),
    # Sealed entries: the commitment binds the opening, the outer entry carries nothing else.
    (
        "opening differs from the commitment",
        lambda: t12_open(opened(v.T12_OPENING, dice=[10, 10, 10])),
        "fail",
        "commitment",
    ),
    (
        "parent's opening differs from its commitment",
        lambda: t13_open(opened(v.T12_OPENING, dice=[1, 4, 3])),
        "fail",
        "commitment",
    ),
    ("sealed reroll without its parent's opening", lambda: t13_open(parent_opening=None), "fail", "parent"),
    (
        "sealed outer entry with an extra field, no opening",
        lambda: bundle(edited(v.T12, purpose="Sigilo"), v.SEQ9, opening=None),
        "fail",
        "sealed-fields",
    ),
    (
        "sealed outer entry with an extra field, with opening",
        lambda: t12_open(outer=edited(v.T12, dice=[10, 4, 3])),
        "fail",
        "sealed-fields",
    ),
    (
        "sealed outer entry without its audience",
        lambda: bundle(edited(v.T12, audience=DROP), v.SEQ9, opening=None),
        "fail",
        "sealed-fields",
    ),
    (
        "opening whose time differs from the outer entry",
        lambda: t12_resealed(time="2025-01-15T20:34:00Z"),
        "fail",
        "opening",
    ),
    (
        "opening with a short client seed",
        lambda: t12_resealed(client_seed="5eed0010"),
        "fail",
        "client-seed",
    ),
    (
        "opening whose dice do not come from the seed",
        lambda: t12_resealed(dice=[10, 4, 4]),
        "fail",
        "dice",
    ),
    # Extensions: dice == parent's dice + drawn.
    (
        "extension whose dice are not the parent's plus the drawn",
        lambda: bundle(edited(v.T11_8, dice=[3, 5, 6]), v.T1, parent=ref(v.T11_7)),
        "fail",
        "dice",
    ),
    (
        "extension whose drawn die is not derived",
        lambda: bundle(edited(v.T11_8, drawn=[5], dice=[3, 6, 5]), v.T1, parent=ref(v.T11_7)),
        "fail",
        "dice",
    ),
    # Exploding dice: exactly the explosions, in the fixed order.
    ("exploding roll with a missing die", lambda: bundle(edited(v.T10, dice=[3, 6]), v.T1), "fail", "dice"),
    ("exploding roll with an extra die", lambda: bundle(edited(v.T10, dice=[3, 6, 3, 1]), v.T1), "fail", "dice"),
    (
        "explosions in another order",
        lambda: bundle(roll_entry("2d6!+1d8", "t10b-766", [6, 5, 8, 6, 2, 6]), TEST_EPOCH),
        "fail",
        "dice",
    ),
    (
        "explosions past 100 dice",
        lambda: bundle(
            roll_entry(CAP_SPEC, CAP_SEED, derive(TEST_SEED, CAP_MESSAGE, CAP_SPEC, cap=10_000)), TEST_EPOCH
        ),
        "fail",
        "dice",
    ),
    # Signatures, hash, permalink, slot, parent link, canonical bytes.
    ("wrong signature", lambda: bundle(replace(v.T2, sig=v.T3.sig), v.T1), "fail", "signature"),
    ("wrong epoch_open signature", lambda: bundle(v.T2, replace(v.T1, sig=v.SEQ9.sig)), "fail", "signature"),
    ("forgery under the bundle's own key", lambda: forged(), "fail", "signature"),
    ("wrong permalink", lambda: {**bundle(v.T2, v.T1), "permalink": v.T3.permalink}, "fail", "permalink"),
    ("wrong entry hash", lambda: {**bundle(v.T2, v.T1), "entry_hash": v.T3.hash}, "fail", "hash"),
    ("seed not committed by the anchor", lambda: bundle(edited(v.T2, epoch_index=2), v.T1), "fail", "seed"),
    ("reroll of another parent", lambda: bundle(v.T5, v.T1, parent=ref(v.T3)), "fail", "parent"),
    ("non-canonical bytes", lambda: bundle(sign(v.T2.entry.replace(",", ", ", 1)), v.T1), "fail", "canonical"),
    (
        "duplicate key",
        lambda: bundle(sign(v.T2.entry.replace('"dice":', '"dice":[10,10,10],"dice":', 1)), v.T1),
        "fail",
        "canonical",
    ),
]


def status_text(result: str, reason: str) -> str:
    mark = {"ok": "✓ ", "sealed": "✓ ", "fail": "✗ ", "unsupported": ""}[result]
    return mark + LABELS[result] + (f" ({reason})" if reason else "")


@pytest.fixture
def show(page: Page) -> Callable[[dict], Locator]:
    """Open the test page with a bundle and wait for the script's verdict."""
    tokens = []

    def open_page(bundle: dict, public_key: str = v.PUBLIC_KEY_HEX) -> Locator:
        token = uuid.uuid4().hex
        tokens.append(token)
        PAGES[token] = (bundle, public_key)
        page.goto(f"/prueba-verificador/{token}/")
        box = page.locator("#inpage-check")
        expect(box).to_have_attribute("data-result", RESULTS)
        return box

    yield open_page
    for token in tokens:
        PAGES.pop(token, None)


@pytest.mark.parametrize(("build", "result", "reason"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_in_page_verifier(show, build, result, reason):
    box = show(build())
    assert box.get_attribute("data-result") == result, box.inner_text()
    expect(box.locator(".inpage-status")).to_have_text(status_text(result, reason))
    colour = {"ok": "text-success", "sealed": "text-success", "fail": "text-danger"}[result]
    expect(box).to_have_class(re.compile(rf"\b{colour}\b"))


def test_the_pinned_key_decides_not_the_bundle(show):
    # T2 is genuine, but a page pinning another key must not call it verified.
    other = Ed25519PrivateKey.generate().public_key().public_bytes_raw().hex()
    box = show(bundle(v.T2, v.T1), public_key=other)
    assert box.get_attribute("data-result") == "fail"
    expect(box.locator(".inpage-status")).to_have_text(status_text("fail", "signature"))


# --- browsers that cannot check --------------------------------------------------

NO_WEBCRYPTO = 'Object.defineProperty(Crypto.prototype, "subtle", { get() { return undefined; } });'
NO_ED25519 = """
const importKey = SubtleCrypto.prototype.importKey;
SubtleCrypto.prototype.importKey = function (format, data, algorithm, ...rest) {
  const name = typeof algorithm === "string" ? algorithm : algorithm.name;
  if (name === "Ed25519") return Promise.reject(new DOMException("no Ed25519", "NotSupportedError"));
  return importKey.call(this, format, data, algorithm, ...rest);
};
"""


def test_without_webcrypto_the_check_says_so(page: Page, show):
    page.context.add_init_script(NO_WEBCRYPTO)
    box = show(bundle(v.T2, v.T1))
    assert box.get_attribute("data-result") == "unsupported"
    expect(box.locator(".inpage-status")).to_have_text(status_text("unsupported", ""))
    expect(box).to_have_class(re.compile(r"\btext-body-secondary\b"))


def test_without_ed25519_a_good_roll_is_unsupported_and_a_bad_one_still_fails(page: Page, show):
    page.context.add_init_script(NO_ED25519)
    assert show(bundle(v.T10, v.T1)).get_attribute("data-result") == "unsupported"
    assert show(t12_open()).get_attribute("data-result") == "unsupported"
    # Never "ok" without the signatures, but a wrong die is wrong anyway.
    box = show(bundle(edited(v.T10, dice=[3, 6]), v.T1))
    assert box.get_attribute("data-result") == "fail"
    expect(box.locator(".inpage-status")).to_have_text(status_text("fail", "dice"))


def test_a_key_a_browser_with_ed25519_refuses_fails_the_check(page: Page, show):
    # Only NotSupportedError means "this browser cannot check"; any other refusal of the key is a bad key.
    page.context.add_init_script(NO_ED25519.replace('"no Ed25519", "NotSupportedError"', '"bad key", "DataError"'))
    box = show(bundle(v.T2, v.T1))
    assert box.get_attribute("data-result") == "fail"
    expect(box.locator(".inpage-status")).to_have_text(status_text("fail", "key"))


def test_without_rollog_js_the_check_says_it_cannot_check(page: Page, show):
    # The shared primitives did not load (an empty answer for rollog.js): not "Comprobando…" for ever.
    page.route("**/rollog*.js", lambda route: route.fulfill(status=200, content_type="text/javascript", body=""))
    box = show(bundle(v.T2, v.T1))
    assert box.get_attribute("data-result") == "unsupported"
    expect(box.locator(".inpage-status")).to_have_text(status_text("unsupported", ""))


# --- the test hook ---------------------------------------------------------------


def test_the_test_hook_exports_verify_bundle_and_leaves_the_page_alone(page: Page, live_server):
    page.context.add_init_script("window.__rollogTest = {};")
    token = uuid.uuid4().hex
    PAGES[token] = (bundle(v.T2, v.T1), v.PUBLIC_KEY_HEX)
    try:
        page.goto(f"/prueba-verificador/{token}/")
    finally:
        del PAGES[token]
    box = page.locator("#inpage-check")
    expect(box.locator(".inpage-status")).to_have_text("Comprobando en tu navegador…")
    assert box.get_attribute("data-result") is None

    def verify(bundle_: dict) -> dict:
        return page.evaluate("([b, k]) => window.__rollogTest.verifyBundle(b, k)", [bundle_, v.PUBLIC_KEY_HEX])

    outcome = verify(t13_open())
    assert outcome["result"] == "ok"
    # The entry handed back is the opened body, not the outer entry.
    assert outcome["entry"] == json.loads(v.T13_OPENING.body)
    assert verify(bundle(v.T12, v.SEQ9, opening=None))["result"] == "sealed"
    assert verify(t12_open(opened(v.T12_OPENING, dice=[10, 10, 10]))) == {
        "result": "fail",
        "reason": "commitment",
        "entry": None,
    }
    assert verify("not a bundle")["reason"] == "bundle"
