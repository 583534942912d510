"""Hora de Aventuras as the table sees it (``table.systems.GameSystem``): the
post form's roll rows (the attribute and difficulty the GM names, A1, A8;
the dice from the sheet, A2, A3, A7, A22, A29), the exact chance before
rolling, with and without converting chachis (A5), the roll through the
signed log, the GM's requests, the card with its chain (A5, A12, A22) and
the scene's hero points and contests."""

from __future__ import annotations

import operator
from dataclasses import replace
from fractions import Fraction
from functools import reduce
from typing import Any

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db.models import Exists, OuterRef, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns import permissions as perms
from campaigns.models import Post
from campaigns.permissions import Access
from sheets.models import Character
from systems.aventuras import cards
from systems.aventuras.contests import panel as contests_panel
from systems.aventuras.contests import reactions
from systems.aventuras.heroes import panel as heroes_panel
from systems.aventuras.heroes import services as heroes_services
from systems.aventuras.models import AventurasReaction
from systems.aventuras.rolls import services
from systems.aventuras.rolls.forms import AventurasRollForm, RollRequestForm
from table.models import TableRoll
from table.post_rolls import PlannedRoll
from table.systems import GameSystem


def _tools(character) -> list[tuple[str, str]]:
    """The character's tools as the row's choices (A29: +1 to +3 dice to one attribute)."""
    try:
        sheet = character.aventuras
    except ObjectDoesNotExist:
        return []
    return [
        (str(tool.pk), f"{tool.name} (+{tool.bonus} {services.ATTRIBUTE_LABELS[tool.attribute]})")
        for tool in sheet.tools.all()
    ]


def roll_plan(
    character,
    *,
    attribute: str,
    difficulty: int = 0,
    modifier: int = 0,
    tool_id: int | None = None,
    hero_point: bool = False,
    with_experience: bool = False,
    easier: int = 0,
    harder: int = 0,
    action_kind: str = "",
    purpose: str = "",
    client_seed: str | None = None,
    difficulty_hidden: bool = False,
    targets=(),
    reaction=None,
) -> PlannedRoll:
    """An Aventuras roll to make at the table (``services.roll_setup``).
    Raises ``ValidationError`` (its code names the row's field) when the
    sheet lacks what is asked, a hero point cannot be paid, or the dice come
    to zero (A3: an automatic failure, nothing to roll)."""
    setup = services.roll_setup(
        character,
        attribute=attribute,
        difficulty=difficulty,
        modifier=modifier,
        tool_id=tool_id,
        hero_point=hero_point,
        with_experience=with_experience,
        easier=easier,
        harder=harder,
        action_kind=action_kind,
    )
    if setup.automatic_failure:
        raise ValidationError(_("Con 0 dados la acción falla automáticamente: no hay nada que tirar."), code="modifier")
    if reaction is not None and reaction.target_id != character.pk:
        raise ValidationError(_("Esa acción espera la reacción de otro personaje."), code="reacts_to")
    setup = replace(setup, targets=tuple(targets), reaction=reaction)
    return PlannedRoll(
        setup=setup,
        difficulty=setup.difficulty,
        purpose=purpose,
        character=character,
        client_seed=client_seed or None,
        difficulty_hidden=difficulty_hidden,
    )


def readable_reactions(queryset, access: Access):
    """The reactions of ``queryset`` whose action the reader may read (what
    ``table.access.may_read_table_roll`` says of one roll: its post is
    in a scene they see and addressed to them, ``can_read_post``; a roll
    without a post, its scene seen), as one query: a whispered action's
    purpose never reaches a target who may not read it."""
    scenes = perms.visible_scenes(access)
    posts = Post.objects.filter(scene__in=scenes).addressed_to(access.user, is_gm=access.is_gm)
    if not perms.can_view_campaign(access):
        return queryset.none()
    return queryset.filter(
        Q(action__post__in=posts)
        | Q(action__post__isnull=True) & (Q(action__scene__isnull=True) | Q(action__scene__in=scenes))
    )


def _open_reactions(characters, npcs) -> list:
    """The open reactions the post's author may answer as one of the
    speakers, whose action they may read. The author is the GM when NPCs are
    offered (``can_write_as_npc``: every action is theirs to read); else the
    owner of ``characters``, asked for their standing only when some
    reaction is open (constant queries: at most four)."""
    speakers = [*characters, *(npcs or {}).values()]
    if not speakers:
        return []
    reactions_qs = reduce(operator.or_, [reactions.open_for(c) for c in speakers]).select_related(
        "target", "action__first"
    )
    if npcs is not None:
        return list(reactions_qs)
    found = list(reactions_qs)
    if not found:
        return []
    author = characters[0]
    access = perms.campaign_access(author.owner, author.campaign)
    return list(readable_reactions(reactions_qs, access))


def _targets(campaign_id: int, scene_id: int | None, *, every_npc: bool):
    """A18 — whom an action may target: the campaign's approved characters.
    The GM (``every_npc``) may target any; a player every hero, and of the
    GM's characters only those the players know (``AventurasSheet.known``)
    or that have shown up in the scene: speaking, rolling or targeted in a
    post there that everyone who reads the scene reads (to all, not hidden),
    so that the choices never give away a character only the GM knows."""
    found = Character.objects.filter(campaign_id=campaign_id, status=Character.Status.APPROVED)
    if not every_npc:
        shown = Post.objects.filter(scene_id=scene_id, recipients=Post.Recipients.ALL, hidden=False)
        spoke = shown.filter(character_id=OuterRef("pk"))
        rolled = TableRoll.objects.filter(post__in=shown, character_id=OuterRef("pk"))
        targeted = AventurasReaction.objects.filter(action__post__in=shown, target_id=OuterRef("pk"))
        found = found.filter(
            Q(kind=Character.Kind.PC) | Q(aventuras__known=True) | Exists(spoke) | Exists(rolled) | Exists(targeted)
        )
    return found.order_by("name", "pk")


def _campaign_id(characters, npcs) -> int | None:
    for character in [*characters, *(npcs or {}).values()]:
        return character.campaign_id
    return None


class Aventuras(GameSystem):
    key = "aventuras"
    label = gettext_lazy("Hora de Aventuras")
    chance_template = "aventuras/_chance_detail.html"

    def characters(self, queryset):
        return queryset.select_related("aventuras").prefetch_related("aventuras__tools", "aventuras__states")

    # --- the post form ------------------------------------------------------------

    def writer_facts(self, characters, npcs, scene_id=None) -> tuple:
        """The reactions waiting for one of the writer's characters or NPCs
        (the rows' «Reacciona a» choices), as ids, and for a player the
        characters their actions may target in the scene (``_targets``:
        they change as NPCs show up there), as ids."""
        speakers = [*characters, *npcs]
        if not speakers:
            return ()
        waiting = AventurasReaction.objects.filter(
            target__in=speakers, roll__isnull=True, declined_at__isnull=True
        ).order_by("pk")
        facts = tuple(waiting.values_list("pk", flat=True))
        if npcs:  # The GM targets every character of the campaign.
            return facts
        targets = _targets(speakers[0].campaign_id, scene_id, every_npc=False)
        return (facts, tuple(targets.values_list("pk", flat=True)))

    def roll_row(self, data, *, prefix, characters, npcs, scene_id=None):
        return self.roll_rows(data, prefixes=[prefix], characters=characters, npcs=npcs, scene_id=scene_id)[0]

    def roll_rows(self, data, *, prefixes, characters, npcs, scene_id=None):
        """The rows share their choices: the tools, the targets (``_targets``)
        and the open reactions, read once for them all."""
        characters = list(characters)
        tool_groups = [(c.name, _tools(c)) for c in [*characters, *(npcs or {}).values()]]
        campaign_id = _campaign_id(characters, npcs)
        targets = (
            list(_targets(campaign_id, scene_id, every_npc=npcs is not None).only("id", "name", "campaign_id"))
            if campaign_id is not None
            else []
        )
        open_reactions = _open_reactions(characters, npcs)
        return [
            AventurasRollForm(
                data, prefix=prefix, tool_groups=tool_groups, npcs=npcs, targets=targets, open_reactions=open_reactions
            )
            for prefix in prefixes
        ]

    def plan(self, row, *, speaking_as) -> PlannedRoll:
        fields = row.cleaned_data
        character = fields.get("npc_character") or speaking_as
        return roll_plan(
            character,
            attribute=fields.get("attribute") or "",
            difficulty=fields["difficulty"],
            modifier=fields["modifier"],
            tool_id=fields.get("tool_id"),
            hero_point=fields.get("hero_point", False),
            with_experience=fields.get("with_experience", False),
            easier=fields["easier"],
            harder=fields["harder"],
            action_kind=fields.get("action_kind") or "",
            purpose=fields["purpose"],
            client_seed=fields.get("client_seed"),
            targets=fields.get("target_characters") or (),
            reaction=fields.get("reaction"),
        )

    def chance(self, plan, campaign) -> Fraction:
        return plan.setup.chance

    def roll(self, plan, *, post, user, position):
        scene = post.scene
        setup = plan.setup
        table_roll = services.make_roll(
            campaign=scene.campaign,
            user=user,
            setup=setup,
            purpose=plan.purpose or _("Tirada"),
            character=plan.character,
            scene=scene,
            post=post,
            client_seed=plan.client_seed,
            position=position,
            kind="reaction" if setup.reaction is not None else "check",
            difficulty_hidden=plan.difficulty_hidden,
        )
        if setup.targets:
            # A18 — one reaction per target, each compared on its own.
            reactions.open_reactions(table_roll, list(setup.targets), by=user)
        if setup.reaction is not None:
            reactions.answer(setup.reaction, table_roll, by=user)
        return table_roll

    # --- the GM's roll requests ------------------------------------------------------

    def request_form(self, data=None, *, characters):
        return RollRequestForm(data, characters=characters)

    def request_fields(self, cleaned: dict) -> dict:
        return {"difficulty": cleaned["difficulty"], "facts": {"attribute": cleaned["attribute"]}}

    def request_plan(self, request, *, client_seed=None) -> PlannedRoll:
        """What the answer rolls: the attribute and the difficulty the GM
        named (A1, A8), with the sheet's states (A3, A7)."""
        return roll_plan(
            request.character,
            attribute=(request.facts or {}).get("attribute", ""),
            difficulty=int(request.difficulty or 0),
            purpose=request.purpose,
            client_seed=client_seed,
            difficulty_hidden=request.difficulty_hidden,
        )

    # --- cards ---------------------------------------------------------------------

    def card(self, base, *, access, table_roll) -> dict[str, Any]:
        return cards.aventuras_card(base, access=access, table_roll=table_roll)

    def page_cards(self, table_rolls, bases, *, access, has_character):
        actions = cards.page_actions(table_rolls, access=access)
        return {
            tr.pk: cards.aventuras_card(bases[tr.pk], access=access, table_roll=tr, actions=actions[tr.pk])
            for tr in table_rolls
        }

    def page_card_bodies(self, table_rolls, bases, *, access):
        return {
            tr.pk: cards.aventuras_card(bases[tr.pk], access=access, table_roll=tr, with_actions=False)
            for tr in table_rolls
        }

    def page_actions(self, table_rolls, *, access, has_character):
        return cards.page_actions(table_rolls, access=access)

    def log_cards(self, entries, bases, *, access):
        return cards.entries_card(entries, bases, access=access)

    def badge_line(self, game, signed_entry) -> str:
        return cards.badge_line(game, signed_entry)

    # --- the scene page --------------------------------------------------------------

    def scene_context(self, scene, access, *, characters) -> dict[str, Any]:
        """The GM's requests, and in a scene of the game the hero points
        (``heroes.panel``) and the contests (``contests.panel``), each shown
        through its own template key by a small wrapper of the seam's slot."""
        context: dict[str, Any] = {
            "roll_request_template": "aventuras/rolls/_roll_request.html",
            "can_manage": perms.can_manage(access),
        }
        if scene.is_offgame:
            return context
        context.update(heroes_panel.scene_panel(scene, access, characters=characters))
        context.update(contests_panel.scene_tools(scene, access))
        if context.get("aventuras_balances_template"):
            context["balances_template"] = "aventuras/_scene_balances.html"
        if context.get("aventuras_contests_template"):
            # A whole section with its forms: under the table's bar, not in it.
            context["scene_sections_template"] = "aventuras/_scene_sections.html"
        return context

    def scene_started(self, scene, *, actor) -> None:
        """A27 — a new scene ends the states "por el morro" of the last one."""
        heroes_services.scene_started(scene, actor=actor)
