"""The fear tests (V26, V27) and opposed rolls (V14) of a scene: the pages,
the GM's start forms and the players' answers.

Anyone who may read the scene sees the pages (404 otherwise); only the GM
starts or closes (403 for other members); a character's test is rolled by
its player or the GM (403). Refusals come back in Spanish, nothing changed.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from campaigns import permissions as perms
from campaigns.models import Scene
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment, redirect_after
from rules import vaesen
from sheets.models import Character
from sheets.permissions import can_play_character
from systems.vaesen.fear import opposed as opposed_services
from systems.vaesen.fear import services
from systems.vaesen.fear.forms import FearRollForm, FearStartForm, OpposedStartForm, SeedForm, TerrorForm
from systems.vaesen.rolls.services import ATTRIBUTE_LABELS
from table.access import scene_for
from table.cards import cards_for
from table.models import TableRoll

GM_ONLY = _("Solo la dirección de la partida puede hacer esto.")
ROLLS_SHOWN = 30


def vaesen_scene(request: HttpRequest, slug: str, scene_id: int, **kwargs) -> tuple[Scene, Access]:
    """``scene_for`` for a Vaesen campaign (404 for another game's)."""
    scene, access = scene_for(request, slug, scene_id, **kwargs)
    if scene.campaign.system != "vaesen":
        raise Http404
    return scene, access


def _characters(scene: Scene):
    return Character.objects.filter(campaign=scene.campaign).in_play().select_related("vaesen", "owner")


def _messages(exc: ValidationError) -> str:
    return " ".join(exc.messages)


def _error_out(request: HtmxHttpRequest, url: str, error: str) -> HttpResponse:
    messages.error(request, error)
    return redirect_after(request, url)


# --- fear --------------------------------------------------------------------------------


def _fear_url(scene: Scene) -> str:
    return reverse("vaesen:fear", args=[scene.campaign.slug, scene.pk])


def _open_rows(tests, access: Access, characters: dict[int, Character]) -> list[dict]:
    """Each open test with its characters: rolled or not, and for whoever
    may roll, the exact chance with Lógica and with Empatía (V26)."""
    rows = []
    for test in tests:
        present = [characters[pk] for pk in test["characters"] if pk in characters]
        answers = []
        for character in present:
            rolled = test["rolled"].get(str(character.pk))
            row = {"character": character, "rolled": rolled, "can_roll": False, "options": [], "refusal": ""}
            if rolled is None and access.user.is_authenticated and can_play_character(access, character):
                row["can_roll"] = True
                for attribute in services.FEAR_ATTRIBUTES:
                    try:
                        setup = services.fear_setup(character, attribute=attribute, fear=test["fear"], present=present)
                    except ValidationError as exc:
                        row["refusal"] = _messages(exc)
                        row["can_roll"] = False
                        break
                    row["options"].append(
                        {"attribute": attribute, "label": ATTRIBUTE_LABELS[attribute], "setup": setup}
                    )
            answers.append(row)
        rows.append({**test, "answers": answers})
    return rows


def _fear_context(request: HttpRequest, access: Access, scene: Scene, *, form=None) -> dict:
    characters = {c.pk: c for c in _characters(scene)}
    pcs = [c for c in characters.values() if not c.is_npc]
    creatures = [c for c in characters.values() if c.is_npc and c.vaesen.fear is not None]
    rolls = list(
        TableRoll.objects.filter(scene=scene, kind=services.FEAR)
        .select_related("first__user", "latest__user", "character", "owner")
        .order_by("-id")[:ROLLS_SHOWN]
    )
    cards = cards_for(rolls, access=access)
    rolled = []
    for tr in rolls:
        rolled.append(
            {
                "table_roll": tr,
                "card": cards[tr.pk],
                "terror": tr.facts.get(services.TERROR),
                "can_accept": access.user.is_authenticated
                and services.terror_refusal(tr, access.user, is_gm=access.is_gm) is None,
            }
        )
    open_tests = _open_rows(services.open_tests(scene), access, characters)
    if form is None and access.is_gm and scene.status != Scene.Status.ARCHIVED:
        form = FearStartForm(creatures=creatures, characters=pcs)
    return {
        "campaign": scene.campaign,
        "scene": scene,
        "access": access,
        "open_tests": open_tests,
        "rolled": rolled,
        "form": form,
        "reactions": services.REACTIONS,
    }


@require_safe
def fear_page(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The scene's fear tests: open ones with each character's answer and its
    chance, the rolled ones with their cards, and the GM's start form."""
    scene, access = vaesen_scene(request, slug, scene_id)
    return page_or_fragment(request, "vaesen/fear.html", "fear-board", _fear_context(request, access, scene))


@login_required
@require_POST
def fear_start(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """V26 — the GM starts a fear test for the characters present."""
    scene, access = vaesen_scene(request, slug, scene_id, need=perms.can_manage, denied=GM_ONLY)
    characters = list(_characters(scene))
    form = FearStartForm(
        request.POST,
        creatures=[c for c in characters if c.is_npc and c.vaesen.fear is not None],
        characters=[c for c in characters if not c.is_npc],
    )
    if form.is_valid():
        try:
            services.fear_start(
                scene=scene,
                actor=request.user,
                characters=form.cleaned_data["chosen"],
                fear=form.cleaned_data.get("fear"),
                creature=form.cleaned_data["creature_character"],
                against=form.cleaned_data.get("against") or "",
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Prueba de Miedo iniciada: cada jugador tira desde la escena."))
            return redirect_after(request, _fear_url(scene))
    return page_or_fragment(request, "vaesen/fear.html", "fear-board", _fear_context(request, access, scene, form=form))


@login_required
@require_POST
def fear_roll(request: HtmxHttpRequest, slug: str, scene_id: int, test_id: int, character_id: int) -> HttpResponse:
    """V26 — a character's fear test, with Lógica or Empatía, once."""
    scene, access = vaesen_scene(request, slug, scene_id)
    character = get_object_or_404(Character.objects.select_related("vaesen"), pk=character_id, campaign=scene.campaign)
    if not can_play_character(access, character):
        raise PermissionDenied(_("Solo la dirección o quien lleva a este personaje puede tirar por él."))
    form = FearRollForm(request.POST)
    if not form.is_valid():
        return _error_out(request, _fear_url(scene), " ".join(e for errs in form.errors.values() for e in errs))
    try:
        services.fear_roll(
            scene=scene,
            actor=request.user,
            test_id=test_id,
            character=character,
            attribute=form.cleaned_data["attribute"],
            client_seed=form.cleaned_data["client_seed"] or None,
        )
    except ValidationError as exc:
        return _error_out(request, _fear_url(scene), _messages(exc))
    messages.success(request, _("Prueba de Miedo tirada."))
    return redirect_after(request, _fear_url(scene))


@login_required
@require_POST
def fear_close(request: HtmxHttpRequest, slug: str, scene_id: int, test_id: int) -> HttpResponse:
    """The GM closes an open fear test."""
    scene, _access = vaesen_scene(request, slug, scene_id, need=perms.can_manage, denied=GM_ONLY)
    try:
        services.fear_close(scene=scene, actor=request.user, test_id=test_id)
    except ValidationError as exc:
        return _error_out(request, _fear_url(scene), _messages(exc))
    messages.success(request, _("Prueba de Miedo cerrada."))
    return redirect_after(request, _fear_url(scene))


@login_required
@require_POST
def terror(request: HtmxHttpRequest, slug: str, scene_id: int, table_roll_id: int) -> HttpResponse:
    """V27 — accept a failed fear test: rounds Aterrorizado, mental
    conditions and the chosen reaction."""
    scene, access = vaesen_scene(request, slug, scene_id)
    table_roll = get_object_or_404(
        TableRoll.objects.select_related("campaign", "latest", "first", "character"),
        pk=table_roll_id,
        scene=scene,
        kind=services.FEAR,
    )
    if table_roll.owner_id != request.user.pk and not access.is_gm:
        raise PermissionDenied(_("Solo quien hizo la prueba o la dirección aceptan el fallo."))
    form = TerrorForm(request.POST)
    if not form.is_valid():
        return _error_out(request, _fear_url(scene), " ".join(e for errs in form.errors.values() for e in errs))
    try:
        services.terror_accept(
            table_roll=table_roll,
            user=request.user,
            is_gm=access.is_gm,
            reaction=form.cleaned_data["reaction"],
            client_seed=form.cleaned_data["client_seed"] or None,
        )
    except ValidationError as exc:
        return _error_out(request, _fear_url(scene), _messages(exc))
    messages.success(request, _("Fallo aceptado: el personaje queda Aterrorizado."))
    return redirect_after(request, _fear_url(scene) + f"#tirada-{table_roll.pk}")


# --- opposed rolls -------------------------------------------------------------------------


def _opposed_url(scene: Scene) -> str:
    return reverse("vaesen:opposed", args=[scene.campaign.slug, scene.pk])


def _outcome_words(first: TableRoll, second: TableRoll) -> str:
    result = opposed_services.outcome(first, second)
    if result is vaesen.Opposed.TIE:
        return _("Empate: cualquiera de los dos puede forzar su tirada.")
    winner = first if result is vaesen.Opposed.FIRST else second
    return _("Gana %(name)s.") % {"name": winner.character.name if winner.character else _("la dirección")}


def _opposed_context(request: HttpRequest, access: Access, scene: Scene, *, form=None) -> dict:
    characters = {c.pk: c for c in _characters(scene)}
    pending = []
    for item in opposed_services.open_rolls(scene):
        sides = []
        for index, side in enumerate(item["sides"]):
            character = characters.get(side["character"])
            sides.append(
                {
                    "index": index,
                    "character": character,
                    "rolled": side["roll"] is not None,
                    "can_roll": side["roll"] is None
                    and character is not None
                    and access.user.is_authenticated
                    and can_play_character(access, character),
                    "what": " + ".join(
                        str(x)
                        for x in (
                            ATTRIBUTE_LABELS.get(side["attribute"], ""),
                            side["skill"],
                            _("%(n)s dados") % {"n": side["pool"]} if side["pool"] else "",
                        )
                        if x
                    ),
                }
            )
        pending.append({**item, "side_rows": sides})
    pairs = opposed_services.scene_pairs(scene)
    cards = cards_for([tr for pair in pairs for tr in pair], access=access)
    done = [
        {"first": a, "second": b, "first_card": cards[a.pk], "second_card": cards[b.pk], "words": _outcome_words(a, b)}
        for a, b in pairs
    ]
    if form is None and access.is_gm and scene.status != Scene.Status.ARCHIVED:
        form = OpposedStartForm(characters=list(characters.values()))
    return {
        "campaign": scene.campaign,
        "scene": scene,
        "access": access,
        "pending": pending,
        "done": done,
        "form": form,
    }


@require_safe
def opposed_page(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """V14 — the scene's opposed rolls: open ones and the results in words."""
    scene, access = vaesen_scene(request, slug, scene_id)
    return page_or_fragment(request, "vaesen/opposed.html", "opposed-board", _opposed_context(request, access, scene))


@login_required
@require_POST
def opposed_start(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = vaesen_scene(request, slug, scene_id, need=perms.can_manage, denied=GM_ONLY)
    form = OpposedStartForm(request.POST, characters=list(_characters(scene)))
    if form.is_valid():
        try:
            opposed_services.opposed_start(
                scene=scene, actor=request.user, purpose=form.cleaned_data["purpose"], sides=form.cleaned_data["sides"]
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Tirada enfrentada preparada: cada bando tira desde la escena."))
            return redirect_after(request, _opposed_url(scene))
    return page_or_fragment(
        request, "vaesen/opposed.html", "opposed-board", _opposed_context(request, access, scene, form=form)
    )


@login_required
@require_POST
def opposed_roll(request: HtmxHttpRequest, slug: str, scene_id: int, item_id: int, side: int) -> HttpResponse:
    scene, access = vaesen_scene(request, slug, scene_id)
    if not access.is_member and not access.is_gm:
        raise PermissionDenied(_("Solo quien juega en la partida puede tirar."))
    form = SeedForm(request.POST)
    if not form.is_valid():
        return _error_out(request, _opposed_url(scene), " ".join(e for errs in form.errors.values() for e in errs))
    try:
        opposed_services.opposed_roll(
            scene=scene,
            actor=request.user,
            item_id=item_id,
            side=side,
            client_seed=form.cleaned_data["client_seed"] or None,
        )
    except ValidationError as exc:
        return _error_out(request, _opposed_url(scene), _messages(exc))
    messages.success(request, _("Tirada enfrentada hecha."))
    return redirect_after(request, _opposed_url(scene))


@login_required
@require_POST
def opposed_close(request: HtmxHttpRequest, slug: str, scene_id: int, item_id: int) -> HttpResponse:
    """The GM calls off an opposed roll still waiting for a side."""
    scene, _access = vaesen_scene(request, slug, scene_id, need=perms.can_manage, denied=GM_ONLY)
    try:
        opposed_services.opposed_close(scene=scene, actor=request.user, item_id=item_id)
    except ValidationError as exc:
        return _error_out(request, _opposed_url(scene), _messages(exc))
    messages.success(request, _("Tirada enfrentada anulada."))
    return redirect_after(request, _opposed_url(scene))
