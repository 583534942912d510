"""The Vaesen-style d6 pool as the table sees it (``table.systems.GameSystem``):
the post form's test rows, the exact chance before rolling, the test through
the signed log, and the card with its push."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns import permissions as perms
from systems.vaesen import cards
from systems.vaesen.rolls import services
from systems.vaesen.rolls.forms import PoolRollForm
from table.post_rolls import PlannedRoll
from table.systems import GameSystem


def _items(character) -> list[tuple[str, str]]:
    """The character's equipment as the row's choices (its bonus dice, V16)."""
    sheet = getattr(character, "vaesen", None)
    if sheet is None:
        return []
    return [(str(item.pk), f"{item.name} (+{item.bonus})") for item in sheet.items.all()]


def pool_plan(
    character,
    *,
    attribute: str = "",
    skill: str = "",
    free_pool: int | None = None,
    helpers: int = 0,
    item_id: int | None = None,
    modifier: int = 0,
    needed: int = 1,
    purpose: str = "",
    client_seed: str | None = None,
) -> PlannedRoll:
    """A Vaesen test to roll at the table (``services.pool_setup``). Raises
    ``ValidationError`` (its code names the row's field) when the sheet lacks
    what is asked or the character is Broken by physical harm (V11)."""
    setup = services.pool_setup(
        character,
        attribute=attribute,
        skill=skill,
        free_pool=free_pool,
        helpers=helpers,
        item_id=item_id,
        modifier=modifier,
        needed=needed,
    )
    return PlannedRoll(
        setup=setup, difficulty=None, purpose=purpose, character=character, client_seed=client_seed or None
    )


def _combat_url(slug: str, scene_id: int) -> str:
    """The scene's combat page (``systems.vaesen.combat``), when the package has one."""
    try:
        return reverse("vaesen:combat", args=[slug, scene_id])
    except NoReverseMatch:
        return ""


class Vaesen(GameSystem):
    key = "vaesen"
    label = gettext_lazy("Estilo Vaesen (reserva de d6)")
    chance_template = "vaesen/_chance_detail.html"

    def characters(self, queryset):
        return queryset.select_related("vaesen").prefetch_related("vaesen__items")

    # --- the post form ------------------------------------------------------------

    def roll_row(self, data, *, prefix, characters, npcs, scene_id=None):
        item_groups = [(c.name, _items(c)) for c in [*characters, *(npcs or {}).values()]]
        return PoolRollForm(data, prefix=prefix, item_groups=item_groups, npcs=npcs)

    def plan(self, row, *, speaking_as) -> PlannedRoll:
        fields = row.cleaned_data
        return pool_plan(
            fields.get("npc_character") or speaking_as,
            attribute=fields.get("attribute") or "",
            skill=fields.get("skill") or "",
            free_pool=fields.get("free_pool"),
            helpers=fields["helpers"],
            item_id=fields.get("item_id"),
            modifier=fields["modifier"],
            needed=fields["needed"],
            purpose=fields["purpose"],
            client_seed=fields.get("client_seed"),
        )

    def chance(self, plan, campaign) -> Fraction:
        return plan.setup.chance

    def roll(self, plan, *, post, user, position):
        scene = post.scene
        return services.table_test(
            campaign=scene.campaign,
            user=user,
            setup=plan.setup,
            purpose=plan.purpose or _("Tirada"),
            character=plan.character,
            scene=scene,
            post=post,
            client_seed=plan.client_seed,
            position=position,
        )

    # --- the scene --------------------------------------------------------------------

    def scene_context(self, scene, access, *, characters) -> dict[str, Any]:
        """The scene's tools: fear tests, opposed rolls and the «Curación»
        panel (and the combat's link, ``vaesen_combat_tool``, when the combat
        adds its template); the GM also gets the campaign's Vaesen options."""
        tools = not scene.is_offgame
        return {
            "scene_tools_template": "vaesen/_scene_tools.html" if tools else "",
            "can_manage": perms.can_manage(access),
            "vaesen_combat_url": _combat_url(access.campaign.slug, scene.pk) if tools else "",
        }

    # --- cards ---------------------------------------------------------------------

    def card(self, base, *, access, table_roll) -> dict[str, Any]:
        return cards.vaesen_card(base, access=access, table_roll=table_roll)

    def page_cards(self, table_rolls, bases, *, access, has_character):
        actions = cards.page_actions(table_rolls, access=access)
        return {
            tr.pk: cards.vaesen_card(bases[tr.pk], access=access, table_roll=tr, actions=actions[tr.pk])
            for tr in table_rolls
        }

    def page_card_bodies(self, table_rolls, bases, *, access):
        return {
            tr.pk: cards.vaesen_card(bases[tr.pk], access=access, table_roll=tr, with_actions=False)
            for tr in table_rolls
        }

    def page_actions(self, table_rolls, *, access, has_character):
        return cards.page_actions(table_rolls, access=access)

    def log_cards(self, entries, bases, *, access):
        return cards.entries_card(entries, bases, access=access)

    def badge_line(self, game, signed_entry) -> str:
        return cards.badge_line(game, signed_entry)
