"""No POST answers 500 (issue 29, item 3).

First the two server errors the attacks found, each answered in Spanish now
with nothing written; then the walk (below) that sends every POST endpoint of
the site malformed input.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from html import escape

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from campaigns import archive, notify
from campaigns import services as campaign_services
from campaigns.feeds import gm_feed_path
from campaigns.models import ArchiveUpload, Membership
from campaigns.permissions import campaign_access
from rolls import checkpoints
from rolls import services as roll_services
from rolls.forms import CLIENT_SEED_MESSAGE
from sheets.models import Character, SheetEvent
from systems.aventuras.heroes import services as aventuras_heroes
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import table_result
from systems.hitos.models import Activation, HitosEvent
from systems.hitos.secret import services as secret
from systems.hitos.sheet import services as sheet_services
from systems.hitos.system import request_facts
from table.models import TableRoll
from table.roll_requests import services as roll_requests
from tests.conftest import chosen_dice
from tests.factories import client_seed
from tests.site.test_form_limits import (
    FORMS,
    World,
    _aventuras_scene_url,
    _snapshot,
    _vaesen_scene_url,
)


@pytest.fixture
def world(db) -> FuzzWorld:
    return FuzzWorld.build()


def _client(w: World, who: str) -> Client:
    """A client that answers a view's exception as the site does (a 500 page), never raising it."""
    client = Client(raise_request_exception=False)
    user = w.user(who)
    if user is not None:
        client.force_login(user)
    return client


# --- the two 500s of the issue ------------------------------------------------------------------


@pytest.mark.parametrize("seed", ["abc\x00def", "\x00", "s" * 100_000, "😀\u202eabc"])
def test_a_malformed_seed_is_refused_before_it_is_looked_up(world, seed):
    """A seed the log would never store (a NUL byte: PostgreSQL refuses it in a
    query) is refused in Spanish by the idempotency look-up itself."""
    with pytest.raises(ValidationError) as refused:
        roll_services.earlier_entry(campaign=world.campaign, user=world.ana, client_seed=seed)
    assert refused.value.messages == [str(CLIENT_SEED_MESSAGE)]


def test_a_nul_byte_in_the_seed_of_an_activation_is_refused_in_spanish(world):
    """``/tiradas/<id>/activar/`` with a NUL byte in its seed was a 500 on PostgreSQL."""
    url = reverse("hitos:activation-positive", args=[world.table_roll.pk])
    data = {"aspect": f"s{world.scene_aspect.pk}", "payment": "point", "dice": "0", "client_seed": "abc\x00def"}
    client = _client(world, "ana")
    before = _snapshot()

    response = client.post(url, data)

    assert response.status_code == 200
    assert escape(str(CLIENT_SEED_MESSAGE)) in response.content.decode()
    assert _snapshot() == before


def test_a_drama_point_paid_to_re_roll_a_mass_damage_test_re_reads_the_damage(world):
    """A positive activation paid with a drama point on a mass-damage test was
    a 500 (``KeyError 'slashes'``: the meter's re-read took the point's
    ledger line for the damage's). Now the point is paid and the damage is
    read again from the new dice."""
    with chosen_dice([1, 2, 3]):  # C 2 + Aguante: the mass-damage test fails, every box slashed
        change = sheet_services.meter_mark(
            character=world.ines, actor=world.gm, meter=sheet_services.HEALTH, amount=9, post=world.post
        )
    table_roll = TableRoll.objects.get(first=change.roll)
    points = world.ines.hitos.drama_points
    url = reverse("hitos:activation-positive", args=[table_roll.pk])
    data = {"aspect": f"s{world.scene_aspect.pk}", "payment": "point", "dice": "2"}

    response = _client(world, "ana").post(url, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    activation = Activation.objects.get(table_roll=table_roll)
    assert activation.payment == Activation.Payment.POINT
    world.ines.hitos.refresh_from_db()
    assert world.ines.hitos.drama_points == points - 1
    reread = SheetEvent.objects.get(roll=activation.reroll, kind=HitosEvent.DAMAGE)
    table_roll.refresh_from_db()
    capacity = world.ines.hitos.health_meter.capacity
    lost = 9 if table_result(table_roll).success else capacity
    assert reread.after["slashes"] + reread.after["crosses"] == world.ines.hitos.health_meter.lost == lost


# --- the walk -------------------------------------------------------------------------------------
#
# Every POST endpoint of the site (the URL patterns of the whole site, read
# through django.urls: a pattern whose view does not refuse POST) has an
# ``Endpoint`` below: the forms' ones come from the form-limits registry
# (``FORMS``), the others are listed in ``OTHERS``. Each is sent, as a user
# allowed to use it, once per kind of hostile input (``_kinds``) with every
# field filled at once: the answer is never a server error, and a refusal
# (4xx) writes nothing. Each request runs in a savepoint rolled back after
# it, so each kind meets the same world.
#
# A new endpoint fails test_every_post_endpoint_is_walked until it is added
# here (or to its form's ``Target`` in test_form_limits.py).

NUL = "\x00"
FORMSET_COUNTS = ("-TOTAL_FORMS", "-INITIAL_FORMS")
LONG = 100_000
# An emoji, a right-to-left override, a right-to-left mark, Arabic and an isolate.
SCRIPT = "😀\u202eعربي\u200f\u2066"


@dataclass(frozen=True)
class Endpoint:
    view: str  # the URL's name (its route when it has none)
    url: Callable[[World], str]
    user: str
    data: Callable[[World], dict[str, str]] = lambda w: {}


def _from_forms() -> list[Endpoint]:
    """The forms' targets that POST, one per view, user and data."""
    seen, found = set(), []
    for targets in FORMS.values():
        for target in targets:
            key = (target.view, target.user, target.data)
            if target.method == "post" and key not in seen:
                seen.add(key)
                found.append(Endpoint(target.view, target.url, target.user, target.data))
    return found


class FuzzWorld(World):
    """The forms' world and what the other endpoints act on."""

    @cached_property
    def invitation(self):
        return campaign_services.invitation_create(
            campaign=self.campaign, actor=self.gm, role="player", days=7, max_uses=5
        )

    @cached_property
    def negative_activation(self) -> Activation:
        """Bruno activates Tomás's aspect against Inés's roll: Ana answers, the GM settles."""
        return activations.activate_negative(
            table_roll=self.table_roll, user=self.bruno, aspect_choice=f"a{self.tomas_aspect.pk}", positions=[2]
        )

    @cached_property
    def roll_request(self):
        return roll_requests.request_create(
            access=campaign_access(self.gm, self.campaign),
            scene=self.scene,
            character=self.ines,
            facts=request_facts(characteristic="reflejos", skill="Sigilo", modifier=0),
            difficulty=15,
            purpose="Que no te oigan",
        )

    @cached_property
    def secret_entry(self):
        return secret.secret_check_roll(
            scene=self.scene,
            user=self.gm,
            purpose="Percepción oculta",
            character=self.ines,
            characteristic="intelecto",
            difficulty=15,
            client_seed=client_seed(),
        )

    @cached_property
    def hero_request(self):
        a = self.aventuras
        return aventuras_heroes.ask(character=a.pc, actor=self.ana, kind="flaw", why="Su defecto", scene=a.scene)

    @cached_property
    def vaesen_combat(self):
        return self.vaesen_action.combat

    def vaesen_combatant(self, character: Character):
        return self.vaesen_combat.combatants.get(character=character)

    @cached_property
    def upload(self) -> ArchiveUpload:
        """The GM's export of the campaign, kept for review as the import page
        keeps it (the world's sheets are made without their forms, so the page
        itself would refuse them) and waiting for the importer's choices."""
        exported = archive.campaign_export(access=campaign_access(self.gm, self.campaign))
        return archive.upload_keep(self.gm, json.dumps(exported).encode(), exported)


DEADLINE = {"plazo": "2099-01-01T20:00", "recordar": "1d"}


def _scene(name: str, *args) -> Callable[[World], str]:
    return lambda w: w.scene_url(name, *args)


def _vaesen_combat(name: str) -> Callable[[World], str]:
    return lambda w: _vaesen_scene_url(w, name, w.vaesen_combat.pk)


def _vaesen_combatant(name: str) -> Callable[[World], str]:
    return lambda w: _vaesen_scene_url(w, name, w.vaesen_combatant(w.vaesen.pc).pk)


def _vaesen_action(name: str) -> Callable[[World], str]:
    return lambda w: _vaesen_scene_url(w, name, w.vaesen_action.pk)


def _sheet_pages() -> list[Endpoint]:
    """The shared sheet addresses, served by each game system."""
    found = []
    for campaign, pc in (
        (lambda w: w.campaign, lambda w: w.ines),
        (lambda w: w.vaesen.campaign, lambda w: w.vaesen.pc),
        (lambda w: w.aventuras.campaign, lambda w: w.aventuras.pc),
    ):
        for page in ("list", "import"):
            found.append(
                Endpoint(
                    f"sheets:sheet-{page}",
                    lambda w, page=page, campaign=campaign: reverse(f"sheets:sheet-{page}", args=[campaign(w).slug]),
                    "ana",
                    lambda w: {"file": "{}", "preview": "1"},
                )
            )
        for page in ("detail", "submit", "print", "export"):
            found.append(
                Endpoint(
                    f"sheets:sheet-{page}",
                    lambda w, page=page, campaign=campaign, pc=pc: reverse(
                        f"sheets:sheet-{page}", args=[campaign(w).slug, pc(w).pk]
                    ),
                    "ana",
                    lambda w: {"reason": "Lista"},
                )
            )
    return found


OTHERS: list[Endpoint] = [
    # --- accounts
    Endpoint("accounts:logout", lambda w: reverse("accounts:logout"), "ana"),
    Endpoint(
        "accounts:password-change",
        lambda w: reverse("accounts:password-change"),
        "ana",
        lambda w: {
            "old_password": "clave-de-prueba-123",
            "new_password1": "otra-clave-9",
            "new_password2": "otra-clave-9",
        },
    ),
    Endpoint(
        "accounts:password-reset-confirm",
        lambda w: reverse(
            "accounts:password-reset-confirm",
            args=[urlsafe_base64_encode(force_bytes(w.ana.pk)), default_token_generator.make_token(w.ana)],
        ),
        "anonymous",
        lambda w: {"new_password1": "otra-clave-9", "new_password2": "otra-clave-9"},
    ),
    Endpoint("language-set", lambda w: reverse("language-set"), "ana", lambda w: {"language": "en", "next": "/"}),
    Endpoint("campaigns:notifications-read-all", lambda w: reverse("campaigns:notifications-read-all"), "ana"),
    Endpoint(
        "campaigns:email-unsubscribe",
        lambda w: reverse("campaigns:email-unsubscribe", args=[notify.unsubscribe_token(w.ana)]),
        "anonymous",
        lambda w: {"List-Unsubscribe": "One-Click"},
    ),
    # --- campaigns
    Endpoint(
        "campaigns:campaign-import",
        lambda w: reverse("campaigns:campaign-import"),
        "gm",
        lambda w: {"file": "{}", "visibility": "private"},
    ),
    Endpoint(
        "campaigns:campaign-import-review",
        lambda w: reverse("campaigns:campaign-import-review", args=[w.upload.pk]),
        "gm",
        lambda w: {"visibility": "private", "trusted_keys": ""},
    ),
    Endpoint("campaigns:invitation-revoke", lambda w: w.url("campaigns:invitation-revoke", w.invitation.pk), "gm"),
    Endpoint(
        "campaigns:invitation-open",
        lambda w: reverse("campaigns:invitation-open", args=[w.invitation.token]),
        "outsider",
    ),
    Endpoint("campaigns:membership-leave", lambda w: w.url("campaigns:membership-leave"), "bruno"),
    Endpoint(
        "campaigns:member-role",
        lambda w: w.url("campaigns:member-role", Membership.objects.get(campaign=w.campaign, user=w.bruno).pk),
        "gm",
        lambda w: {"role": "reader"},
    ),
    Endpoint(
        "campaigns:campaign-hand-over",
        lambda w: w.url("campaigns:campaign-hand-over"),
        "gm",
        lambda w: {"membership": str(Membership.objects.get(campaign=w.campaign, user=w.bruno).pk)},
    ),
    Endpoint("campaigns:gm-feed-rotate", lambda w: w.url("campaigns:gm-feed-rotate"), "gm"),
    Endpoint("campaigns:scene-feed", _scene("campaigns:scene-feed"), "ana"),
    Endpoint("campaigns:campaign-feed", lambda w: w.url("campaigns:campaign-feed"), "ana"),
    Endpoint(
        "campaigns:member-feed",
        lambda w: reverse(
            "campaigns:member-feed", args=[Membership.objects.get(campaign=w.campaign, user=w.ana).feed_token]
        ),
        "anonymous",
    ),
    Endpoint("campaigns:gm-feed", lambda w: gm_feed_path(w.campaign), "anonymous"),
    Endpoint(
        "campaigns:absence-consent", lambda w: w.url("campaigns:absence-consent"), "ana", lambda w: {"consent": "gm"}
    ),
    Endpoint(
        "campaigns:absence-edit",
        lambda w: w.url("campaigns:absence-edit", w.bruno_away.pk),
        "bruno",
        lambda w: {"starts_on": "2099-01-01", "ends_on": "2099-01-03", "note": "de viaje", "hold_notifications": "on"},
    ),
    Endpoint("campaigns:absence-cancel", lambda w: w.url("campaigns:absence-cancel", w.bruno_away.pk), "bruno"),
    Endpoint("campaigns:absence-return", lambda w: w.url("campaigns:absence-return", w.bruno_away.pk), "bruno"),
    Endpoint("campaigns:scene-deadline", _scene("campaigns:scene-deadline"), "gm", lambda w: dict(DEADLINE)),
    Endpoint(
        "campaigns:deadline-withdraw",
        lambda w: w.url("campaigns:deadline-withdraw", w.passed_deadline.pk),
        "gm",
        lambda w: {"volver": "direccion"},
    ),
    Endpoint("campaigns:nudge", _scene("campaigns:nudge"), "gm", lambda w: {"user": str(w.ana.pk)}),
    # --- sheets
    *_sheet_pages(),
    Endpoint("sheets:sheet-options", lambda w: w.url("sheets:sheet-options"), "gm", lambda w: {"players_edit": "on"}),
    # --- rolls
    Endpoint("verificador/verify_roll.py", lambda w: "/verificador/verify_roll.py", "anonymous"),
    Endpoint("rolls:checkpoints", lambda w: w.url("rolls:checkpoints"), "ana", lambda w: {"action": "recibir"}),
    Endpoint(
        "rolls:checkpoint-unsubscribe",
        lambda w: reverse("rolls:checkpoint-unsubscribe", args=[checkpoints.unsubscribe_token(w.ana, w.campaign)]),
        "anonymous",
        lambda w: {"List-Unsubscribe": "One-Click"},
    ),
    # --- table
    Endpoint("table:request-cancel", lambda w: reverse("table:request-cancel", args=[w.roll_request.pk]), "gm"),
    # --- HITOS
    Endpoint(
        "hitos:activation-answer",
        lambda w: reverse("hitos:activation-answer", args=[w.negative_activation.pk]),
        "ana",
        lambda w: {"respuesta": "aceptar", "client_seed": client_seed()},
    ),
    Endpoint(
        "hitos:activation-settle",
        lambda w: reverse("hitos:activation-settle", args=[w.negative_activation.pk]),
        "gm",
        lambda w: {"respuesta": "aceptar", "client_seed": client_seed()},
    ),
    Endpoint(
        "hitos:activation-force",
        lambda w: reverse("hitos:activation-force", args=[w.negative_activation.pk]),
        "gm",
    ),
    Endpoint(
        "hitos:combat-start",
        _scene("hitos:combat-start"),
        "gm",
        lambda w: {"characters": [str(w.ines.pk), str(w.npc.pk)]},
    ),
    Endpoint("hitos:combat-round", lambda w: w.scene_url("hitos:combat-round", w.combat.pk), "gm"),
    Endpoint("hitos:combat-end", lambda w: w.scene_url("hitos:combat-end", w.combat.pk), "gm"),
    Endpoint(
        "hitos:combat-deadline",
        lambda w: w.scene_url("hitos:combat-deadline", w.combat.pk),
        "gm",
        lambda w: dict(DEADLINE),
    ),
    Endpoint(
        "hitos:combat-combatant-add",
        lambda w: w.scene_url("hitos:combat-combatant-add", w.combat.pk),
        "gm",
        lambda w: {"character": str(w.tomas.pk)},
    ),
    Endpoint(
        "hitos:combat-combatant-remove",
        lambda w: w.scene_url("hitos:combat-combatant-remove", w.combatant(w.ines).pk),
        "gm",
    ),
    Endpoint(
        "hitos:combat-combatant-act", lambda w: w.scene_url("hitos:combat-combatant-act", w.combatant(w.ines).pk), "gm"
    ),
    Endpoint(
        "hitos:combat-combatant-state",
        lambda w: w.scene_url("hitos:combat-combatant-state", w.combatant(w.ines).pk),
        "gm",
        lambda w: {"all_out_defence": "on", "defenceless": "", "out_of_combat": ""},
    ),
    Endpoint(
        "hitos:secret-roll-reveal", lambda w: reverse("hitos:secret-roll-reveal", args=[w.secret_entry.permalink]), "gm"
    ),
    Endpoint(
        "hitos:aspect-update",
        lambda w: w.sheet_url("hitos:aspect-update", w.ines, w.ines_aspect.pk),
        "gm",
        lambda w: {"action": "exhaust", "until": "session"},
    ),
    # --- Vaesen
    Endpoint("vaesen:fear-close", lambda w: _vaesen_scene_url(w, "vaesen:fear-close", w.fear_test["id"]), "gm"),
    Endpoint("vaesen:opposed-close", lambda w: _vaesen_scene_url(w, "vaesen:opposed-close", w.opposed["id"]), "gm"),
    Endpoint(
        "vaesen:healing-apply",
        lambda w: _vaesen_scene_url(w, "vaesen:healing-apply", w.failed_test.pk),
        "gm",
        lambda w: {"client_seed": client_seed()},
    ),
    Endpoint(
        "vaesen:combat-start",
        lambda w: _vaesen_scene_url(w, "vaesen:combat-start"),
        "gm",
        lambda w: {"characters": [str(w.vaesen.pc.pk), str(w.vaesen.npc.pk)]},
    ),
    Endpoint(
        "vaesen:combat-swap",
        _vaesen_combat("vaesen:combat-swap"),
        "gm",
        lambda w: {
            "first": str(w.vaesen_combatant(w.vaesen.pc).pk),
            "second": str(w.vaesen_combatant(w.vaesen.npc).pk),
        },
    ),
    Endpoint("vaesen:combat-turn", _vaesen_combat("vaesen:combat-turn"), "gm"),
    Endpoint("vaesen:combat-end", _vaesen_combat("vaesen:combat-end"), "gm"),
    Endpoint("vaesen:combat-deadline", _vaesen_combat("vaesen:combat-deadline"), "gm", lambda w: dict(DEADLINE)),
    Endpoint(
        "vaesen:combat-combatant-add",
        _vaesen_combat("vaesen:combat-combatant-add"),
        "gm",
        lambda w: {"character": str(w.vaesen.pc.pk)},
    ),
    Endpoint(
        "vaesen:combat-declare",
        _vaesen_combat("vaesen:combat-declare"),
        "gm",
        lambda w: {
            "actor": str(w.vaesen_combatant(w.vaesen.npc).pk),
            "kind": "attack",
            "target": str(w.vaesen_combatant(w.vaesen.pc).pk),
            "weapon": "",
            "silence": "",
        },
    ),
    Endpoint("vaesen:combat-combatant-remove", _vaesen_combatant("vaesen:combat-combatant-remove"), "gm"),
    Endpoint("vaesen:combat-release", _vaesen_combatant("vaesen:combat-release"), "gm"),
    Endpoint(
        "vaesen:combat-action-swap",
        _vaesen_action("vaesen:combat-action-swap"),
        "gm",
        lambda w: {
            "first": str(w.vaesen_combatant(w.vaesen.pc).pk),
            "second": str(w.vaesen_combatant(w.vaesen.npc).pk),
        },
    ),
    Endpoint("vaesen:combat-cancel", _vaesen_action("vaesen:combat-cancel"), "gm"),
    Endpoint(
        "vaesen:combat-action-deadline", _vaesen_action("vaesen:combat-action-deadline"), "gm", lambda w: dict(DEADLINE)
    ),
    # --- Hora de Aventuras
    Endpoint("aventuras:settle", lambda w: reverse("aventuras:settle", args=[w.chachi_roll.pk]), "ana"),
    Endpoint(
        "aventuras:hero-decide",
        lambda w: w.aventuras_url("aventuras:hero-decide", w.hero_request.pk),
        "gm",
        lambda w: {"decision": "accept", "where": "panel"},
    ),
    Endpoint(
        "aventuras:initiative-set",
        lambda w: _aventuras_scene_url(w, "aventuras:initiative-set"),
        "gm",
        lambda w: {"characters": [str(w.aventuras.pc.pk), str(w.aventuras.npc.pk)]},
    ),
    Endpoint("aventuras:initiative-clear", lambda w: _aventuras_scene_url(w, "aventuras:initiative-clear"), "gm"),
    Endpoint(
        "aventuras:initiative-tiebreak",
        lambda w: _aventuras_scene_url(w, "aventuras:initiative-tiebreak"),
        "gm",
        lambda w: {"client_seed": client_seed()},
    ),
    Endpoint(
        "aventuras:initiative-agree",
        lambda w: _aventuras_scene_url(w, "aventuras:initiative-agree"),
        "gm",
        lambda w: {"orden": [str(w.aventuras.pc.pk), str(w.aventuras.npc.pk)]},
    ),
    Endpoint(
        "aventuras:reaction-decline",
        lambda w: w.aventuras_url("aventuras:reaction-decline", w.aventuras_reaction.pk),
        "bruno",
    ),
    Endpoint(
        "aventuras:reaction-deadline",
        lambda w: w.aventuras_url("aventuras:reaction-deadline", w.aventuras_reaction.pk),
        "gm",
        lambda w: dict(DEADLINE),
    ),
]

ENDPOINTS = _from_forms() + OTHERS

# What the walk leaves out, and why.
NOT_WALKED = {
    "admin": "Django's own admin: site staff only, Django's forms (no code of ours)",
}


def _kinds(data: dict) -> dict[str, dict]:
    """Each hostile input: the request's keyword arguments for ``Client.post``."""

    def each(change) -> dict:
        return {
            name: [change(v) for v in value] if isinstance(value, list) else change(value)
            for name, value in data.items()
        }

    return {
        "nul": {"data": each(lambda v: f"{v}{NUL}")},
        "long": {"data": each(lambda v: "x" * LONG)},
        "script": {"data": each(lambda v: f"{v}{SCRIPT}"), "headers": {"HX-Request": "true"}},
        "list": {
            "data": {
                name: [*(value if isinstance(value, list) else [value]), "otro", ""] for name, value in data.items()
            }
        },
        "word": {"data": each(lambda v: "diez"), "headers": {"HX-Request": "true"}},
        # A formset's row count stays (Django caps it at 1000 rows, each drawn again: slow, not an error).
        "huge": {"data": {**each(lambda v: "9" * 40), **{k: v for k, v in data.items() if k.endswith(FORMSET_COUNTS)}}},
        "json": {"data": json.dumps(data), "content_type": "application/json"},
    }


def _walked_names() -> set[str]:
    return {endpoint.view for endpoint in ENDPOINTS}


def _patterns(patterns, prefix: str = "", namespace: str = ""):
    """(name or route, namespace, view) of every URL pattern of the site."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = ":".join(part for part in (namespace, pattern.namespace or "") if part)
            yield from _patterns(pattern.url_patterns, prefix + str(pattern.pattern), inner)
        elif isinstance(pattern, URLPattern):
            route = prefix + str(pattern.pattern)
            name = f"{namespace}:{pattern.name}" if namespace and pattern.name else pattern.name or route
            yield name, namespace, pattern.callback


def _methods(view) -> list[str] | None:
    """The methods a view allows, as its ``require_http_methods`` (or class)
    says; None when nothing refuses any method (so POST reaches it)."""
    seen = set()
    while view is not None and id(view) not in seen:
        seen.add(id(view))
        if hasattr(view, "view_class"):
            return [m.upper() for m in view.view_class.http_method_names if hasattr(view.view_class, m)]
        inner = None
        for cell in getattr(view, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(value, list | tuple) and value and all(isinstance(m, str) and m.isupper() for m in value):
                return list(value)
            if inner is None and callable(value) and hasattr(value, "__code__"):
                inner = value
        view = getattr(view, "__wrapped__", None) or inner
    return None


def _post_endpoints() -> set[str]:
    return {
        name
        for name, namespace, view in _patterns(get_resolver().url_patterns)
        if namespace.split(":")[0] not in NOT_WALKED and "POST" in (_methods(view) or ["POST"])
    }


def test_every_post_endpoint_is_walked():
    """Every URL of the site whose view takes a POST is in the walk."""
    posts = _post_endpoints()
    assert len(posts) > 140, "the URL patterns were read"
    assert {"hitos:activation-positive", "campaigns:campaign-import", "language-set"} <= posts
    missing = sorted(posts - _walked_names())
    assert not missing, f"add these POST endpoints to ENDPOINTS in {__name__}: {missing}"
    assert not _walked_names() - posts - {"campaigns:campaign-search"}, "the walk names endpoints that are gone"


def test_the_method_reader_tells_get_only_views_apart():
    names = {name: view for name, namespace, view in _patterns(get_resolver().url_patterns)}
    assert "POST" not in _methods(names["campaigns:campaign-search"])
    assert _methods(names["hitos:combat-end"]) == ["POST"]
    assert "hitos:combat-end" in _post_endpoints()


def _id(endpoint: Endpoint) -> str:
    return f"{endpoint.view}-{endpoint.user}"


def _cases() -> list:
    counted: dict[str, int] = {}
    cases = []
    for endpoint in ENDPOINTS:
        if endpoint.view == "campaigns:campaign-search":
            continue
        base = _id(endpoint)
        counted[base] = counted.get(base, 0) + 1
        name = base if counted[base] == 1 else f"{base}-{counted[base]}"
        cases.append(pytest.param(endpoint, id=name))
    return cases


@pytest.mark.parametrize("endpoint", _cases())
def test_no_hostile_post_is_a_server_error(world, endpoint):
    """NUL bytes, 100 000 characters, emoji and right-to-left marks, lists
    for single values, words and huge numbers for numbers, a JSON body:
    never a 500, and a refusal writes nothing."""
    url, data = endpoint.url(world), {"next": "/", **endpoint.data(world)}
    client = _client(world, endpoint.user)
    failures = []
    for kind, request in _kinds(data).items():
        with transaction.atomic():
            before = _snapshot()
            response = client.post(url, **request)
            if response.status_code >= 500:
                failures.append(f"{kind}: {response.status_code}")
            elif 400 <= response.status_code < 500 and _snapshot() != before:
                failures.append(f"{kind}: refused with {response.status_code} but wrote")
            transaction.set_rollback(True)
    assert not failures, failures
