"""HITOS as the table sees it (``table.systems.GameSystem``): the post form's
check rows, the chance before rolling, the 3d10 check through the signed log,
the GM's requests, the card with its activations, and the scene's tools
(combat, horror, opposed rolls, secret rolls, drama points)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns import permissions as perms
from campaigns import versions
from rolls.models import RollEntry
from sheets.models import Character
from systems.hitos import cards
from systems.hitos.checks import services as checks
from systems.hitos.checks.forms import PostRollForm, RollRequestForm
from systems.hitos.secret import services as secret
from systems.hitos.sheet.services import campaign_new_scene
from table.post_rolls import PlannedRoll
from table.systems import GameSystem


def check_plan(
    character: Character | None,
    *,
    characteristic: str = "",
    skill: str = "",
    free_modifier: int | None = None,
    extra: Sequence[tuple[str, int]] = (),
    difficulty: int,
    purpose: str = "",
    client_seed: str | None = None,
    difficulty_hidden: bool = False,
) -> PlannedRoll:
    """A HITOS check to roll at the table: characteristic + skill from the
    sheet (or a free modifier), the extra modifiers and the sheet's
    penalties (``checks.check_setup``), against ``difficulty``. Raises
    ``ValidationError`` (code ``characteristic`` or ``skill``) when the sheet
    lacks what is asked."""
    setup = checks.check_setup(
        character, characteristic=characteristic, skill=skill, free_modifier=free_modifier, extra=extra
    )
    return PlannedRoll(
        setup=setup,
        difficulty=difficulty,
        purpose=purpose,
        character=character,
        client_seed=client_seed or None,
        difficulty_hidden=difficulty_hidden,
    )


def request_facts(*, characteristic: str, skill: str = "", modifier: int = 0) -> dict:
    """What a GM's request for a HITOS check fixes (``RollRequest.facts``):
    the characteristic, the skill (may be empty) and the GM's modifier."""
    return {"characteristic": characteristic, "skill": skill, "modifier": modifier}


def _shows_secret_rolls(scene, access) -> bool:
    """Whether the scene may have secret rolls this reader sees: the GM's
    own always may; the others see revealed ones, and whether the scene has
    any is kept under its version (a reveal moves it). Most scenes have
    none, and the query that reads them for a reader is costly to build."""
    if access.is_gm:
        return True
    return versions.scene_fact(
        scene.pk,
        "revealed-secret-rolls",
        lambda: RollEntry.objects.filter(scene=scene, audience=RollEntry.Audience.GM, reveal__isnull=False).exists(),
    )


class Hitos(GameSystem):
    key = "hitos"
    label = gettext_lazy("HITOS")
    chance_template = "hitos/_chance_detail.html"

    # --- the post form ------------------------------------------------------------

    def characters(self, queryset):
        return queryset.select_related("hitos").prefetch_related("skills")

    def roll_row(self, data, *, prefix, characters, npcs, scene_id=None):
        skill_groups = [
            (c.name, [(s.name, f"{s.name} ({s.value})") for s in c.skills.all()])
            for c in [*characters, *(npcs or {}).values()]
        ]
        return PostRollForm(data, prefix=prefix, skill_groups=skill_groups, npcs=npcs)

    def plan(self, row, *, speaking_as) -> PlannedRoll:
        fields = row.cleaned_data
        return check_plan(
            fields.get("npc_character") or speaking_as,
            characteristic=fields["characteristic"],
            skill=fields["skill"],
            free_modifier=fields["free_modifier"],
            extra=row.extra(),
            difficulty=fields["difficulty"],
            purpose=fields["purpose"],
            client_seed=fields.get("client_seed"),
        )

    def chance(self, plan, campaign) -> Fraction:
        return checks.chance(plan.setup, plan.difficulty, campaign)

    def roll(self, plan, *, post, user, position):
        scene = post.scene
        return checks.table_check(
            campaign=scene.campaign,
            user=user,
            setup=plan.setup,
            purpose=plan.purpose or _("Tirada"),
            difficulty=plan.difficulty,
            difficulty_hidden=plan.difficulty_hidden,
            character=plan.character,
            scene=scene,
            post=post,
            client_seed=plan.client_seed,
            position=position,
        )

    # --- the GM's roll requests ------------------------------------------------------

    def request_form(self, data=None, *, characters):
        return RollRequestForm(data, characters=characters)

    def request_fields(self, cleaned: dict) -> dict:
        return {
            "difficulty": cleaned["difficulty"],
            "facts": request_facts(
                characteristic=cleaned["characteristic"], skill=cleaned["skill"], modifier=cleaned["modifier"]
            ),
        }

    def request_plan(self, request, *, client_seed=None) -> PlannedRoll:
        """What the answer rolls: the request's characteristic and skill, the
        GM's modifier, and the sheet's penalties (applied by themselves).
        Raises ``ValidationError`` (code ``characteristic`` or ``skill``)
        when the sheet lacks them."""
        facts = request.facts
        modifier = int(facts.get("modifier") or 0)
        return check_plan(
            request.character,
            characteristic=facts.get("characteristic", ""),
            skill=facts.get("skill", ""),
            extra=[(_("Modificador de la dirección"), modifier)] if modifier else [],
            difficulty=request.difficulty,
            purpose=request.purpose,
            client_seed=client_seed,
            difficulty_hidden=request.difficulty_hidden,
        )

    # --- cards ---------------------------------------------------------------------

    def card_prefetches(self, prefix: str = "") -> list:
        return [cards.activations_prefetch(prefix)]

    def card(self, base, *, access, table_roll) -> dict[str, Any]:
        return cards.hitos_card(base, access=access, table_roll=table_roll, has_character=cards.has_character(access))

    def page_cards(self, table_rolls, bases, *, access, has_character):
        keywords = cards.page_actions(table_rolls, access=access, has_character=has_character)
        return {
            tr.pk: cards.hitos_card(bases[tr.pk], access=access, table_roll=tr, **keywords[tr.pk]) for tr in table_rolls
        }

    def page_card_bodies(self, table_rolls, bases, *, access):
        no_character = cards.known(False)
        return {
            tr.pk: cards.hitos_card(
                bases[tr.pk], access=access, table_roll=tr, has_character=no_character, with_actions=False
            )
            for tr in table_rolls
        }

    def page_actions(self, table_rolls, *, access, has_character):
        keywords = cards.page_actions(table_rolls, access=access, has_character=has_character)
        return {tr.pk: cards.roll_actions(tr, access=access, **keywords[tr.pk]) for tr in table_rolls}

    def log_cards(self, entries, bases, *, access):
        hidden = cards.hidden_difficulties(entries) if access.is_gm else {}
        no_character = cards.known(False)
        return {
            e.pk: cards.hitos_card(
                bases[e.pk],
                access=access,
                table_roll=None,
                has_character=no_character,
                known_difficulty=hidden.get(e.pk),
            )
            for e in entries
        }

    def badge_line(self, game, signed_entry) -> str:
        """The dice, the value that counts (C, or after an activation the value
        its reading gives: H15, H19), the total and the outcome in words."""
        if (game.get("reading") or "normal") == "normal":
            kept = f"C {game.get('C')}"
        else:
            kept = f"{_('valor')} {game.get('value', game.get('C'))}"
        line = f"{' · '.join(map(str, signed_entry.get('dice') or []))} ({kept}) → {game.get('total')}"
        if game.get("success") is True:
            return f"{line} {_('éxito')}"
        if game.get("success") is False:
            return f"{line} {_('fallo')}"
        return line

    # --- the scene page --------------------------------------------------------------

    def scene_context(self, scene, access, *, characters: Sequence[Character]) -> dict[str, Any]:
        tools = not scene.is_offgame
        return {
            # The situation aspects (H13), under the scene's description.
            "scene_header_template": "hitos/_scene_aspects.html",
            # Kept under the scene's version, which a situation aspect moves.
            "scene_aspects": versions.scene_fact(
                scene.pk, "aspects", lambda: list(scene.aspects.values_list("phrase", flat=True))
            ),
            "scene_tools_template": "hitos/_scene_tools.html" if tools else "",
            "balances_template": "hitos/_balances.html" if tools else "",
            "scene_sections_template": "hitos/_secret_rolls.html" if tools else "",
            "roll_request_template": "hitos/_roll_request.html",
            "secret_rolls": secret.scene_secret_cards(access, scene)
            if tools and _shows_secret_rolls(scene, access)
            else [],
            # The viewer's drama points (the post form already loaded their characters).
            "drama_characters": list(characters),
            "can_manage": perms.can_manage(access),
        }

    def scene_started(self, scene, *, actor) -> None:
        """A new scene ends the scene-long temporary aspects (H13), whether
        the GM starts it from the campaign page or from the sheets."""
        campaign_new_scene(
            campaign=scene.campaign, actor=actor, reason=_("Escena nueva: «%(title)s»") % {"title": scene.title}
        )
