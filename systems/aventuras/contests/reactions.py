"""Reactions to an action (A14–A18).

An action roll names its targets (``open_reactions``: one row per target,
A18); each target may roll a reaction, from its own post (the rolls package
calls ``answer``) or from a button on the action's card (``react``), or
decline (``decline``, A14). The action must beat max(difficulty, reaction
successes) (A15); a reaction with more successes blocks it completely (A16);
otherwise the reaction's successes cancel the action's in A17's order
(``ReactionOrder.NORMALS_FIRST``: A17 says both orders agree whenever the
action succeeds). Nothing of the result is stored: the card reads it from
the final rolls with ``rules.aventuras.resolve_reaction``.

Lock order: the reaction's row, then the rolls package's (sheet, log's head).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns import deadlines
from campaigns.models import Deadline, Membership, Post, Role, Scene, chosen_readers
from campaigns.permissions import Access, campaign_access
from rolls.models import RollEntry
from rules import aventuras
from rules.aventuras import ReactionOrder
from sheets.models import Character
from systems.aventuras.contests.services import controls
from systems.aventuras.models import AventurasReaction, AventurasSheet

# A17 — the campaign option is not offered: both orders agree whenever the action succeeds.
ORDER = ReactionOrder.NORMALS_FIRST
# The kind of ``campaigns.models.Deadline`` a reaction may be given (target: the reaction).
DEADLINE_KIND = "reaction"


def open_reactions(action, targets, *, by) -> list:
    """One open reaction per target of ``action`` (A18), in the caller's transaction.
    Refuses (``ValidationError``, code "targets") a target that is not in
    the campaign with a Hora de Aventuras sheet, or the acting character itself."""
    targets = list(dict.fromkeys(targets))
    if not targets:
        return []
    ids = {t.pk for t in targets}
    known = set(
        AventurasSheet.objects.filter(pk__in=ids, character__campaign_id=action.campaign_id).values_list(
            "pk", flat=True
        )
    )
    for target in targets:
        if target.pk not in known or not (target.is_npc or target.status == Character.Status.APPROVED):
            raise ValidationError(
                _("%(name)s no es un personaje de esta partida con ficha de Hora de Aventuras.")
                % {"name": target.name},
                code="targets",
            )
        if action.character_id is not None and target.pk == action.character_id:
            raise ValidationError(_("Un personaje no reacciona a su propia acción."), code="targets")
    return [AventurasReaction.objects.create(action=action, target=target) for target in targets]


def _readable_actions(owner_id: int) -> Q:
    """The actions ``owner_id`` may read, as one condition on
    ``AventurasReaction`` (subqueries, no query of its own), as
    ``rolls.permissions.readable_rolls`` reads them: the GM and co-GMs every
    one; a member those in a scene they see (for all, or chosen for it) and
    a post addressed to them (to everyone, theirs, or they were chosen),
    never a secret roll of the GM's not yet revealed."""
    directs = Q(action__campaign__gm_id=owner_id) | Q(
        Exists(
            Membership.objects.active().filter(
                campaign_id=OuterRef("action__campaign_id"), user_id=owner_id, role=Role.COGM
            )
        )
    )
    chosen_scenes = Scene.participants.through.objects.filter(user_id=owner_id).values("scene_id")
    chosen_posts = chosen_readers().filter(user_id=owner_id).values("post_id")
    scene_ok = Q(action__scene__isnull=True) | Q(action__scene__everyone=True) | Q(action__scene_id__in=chosen_scenes)
    post_ok = (
        Q(action__post__isnull=True)
        | Q(action__post__recipients=Post.Recipients.ALL)
        | Q(action__post__author_id=owner_id)
        | Q(action__post__recipients=Post.Recipients.CHOSEN, action__post_id__in=chosen_posts)
    )
    secret = Q(action__first__audience=RollEntry.Audience.GM, action__first__reveal__isnull=True)
    return directs | (scene_ok & post_ok & ~secret)


def open_for(character):
    """The open reactions ``character`` may answer from a post (newest action
    first): only to actions its owner may read (``_readable_actions``: a
    target reacts to what it sees; an action in a post addressed to the GM
    only is not offered to a player whose character it names)."""
    return (
        AventurasReaction.objects.filter(
            _readable_actions(character.owner_id),
            target=character,
            roll__isnull=True,
            declined_at__isnull=True,
            action__campaign_id=character.campaign_id,
        )
        .exclude(action__character_id=character.pk)
        .select_related("action__character", "action__first")
        .order_by("-action__created_at", "-id")
    )


def _locked(reaction: AventurasReaction) -> AventurasReaction:
    locked = (
        AventurasReaction.objects.select_for_update(of=("self",))
        .select_related("action__campaign", "action__scene", "action__character", "action__post", "target")
        .get(pk=reaction.pk)
    )
    if locked.declined_at is not None:
        raise ValidationError(
            _("%(name)s ya ha decidido no reaccionar a esta acción.") % {"name": locked.target.name}, code="declined"
        )
    if locked.roll_id is not None:
        raise ValidationError(
            _("%(name)s ya ha reaccionado a esta acción.") % {"name": locked.target.name}, code="answered"
        )
    return locked


def answer(reaction, table_roll, *, by) -> None:
    """``table_roll`` is ``reaction``'s roll (made from a post's row, or by
    ``react``), in the caller's transaction. Refuses, nothing changed, a
    reaction already answered or declined, a roll of another character, and
    a user who does not answer for the target."""
    locked = _locked(reaction)
    if table_roll.character_id != locked.target_id:
        raise ValidationError(
            _("La reacción la tira %(name)s, el objetivo de la acción.") % {"name": locked.target.name},
            code="target",
        )
    if table_roll.pk == locked.action_id:
        raise ValidationError(_("Un personaje no reacciona a su propia acción."), code="own")
    if not controls(campaign_access(by, locked.action.campaign), locked.target):
        raise PermissionDenied(_("Solo quien lleva a %(name)s reacciona por él.") % {"name": locked.target.name})
    locked.roll = table_roll
    locked.save(update_fields=["roll"])
    reaction.roll = table_roll
    deadlines.withdraw(DEADLINE_KIND, locked.pk)


def react(
    *,
    reaction: AventurasReaction,
    access: Access,
    attribute: str,
    modifier: int = 0,
    tool_id: int | None = None,
    hero_point: bool = False,
    with_experience: bool = False,
    client_seed: str | None = None,
):
    """The «Reaccionar» button: the target's reaction roll (kind "reaction",
    the action's scene), free (A14), by whoever answers for it.

    The roll is no more public than the action: an action in a post not
    addressed to everyone (a whisper, a post to the GM only) gets its
    reaction in that same post, so the log seals it for the same recipients
    (``rolls.permissions.audience_for``) and only they read it; an action in
    a public post, or without one, gets a roll with no post, sealed as its
    scene says (a split party's scene). A target who may not read the
    action does not react to it (``open_for`` does not offer it either)."""
    from systems.aventuras.rolls import services as rolls

    if not controls(access, reaction.target):
        raise PermissionDenied(_("Solo quien lleva a %(name)s reacciona por él.") % {"name": reaction.target.name})
    with transaction.atomic():
        locked = _locked(reaction)
        if locked.action.character_id == locked.target_id:
            raise ValidationError(_("Un personaje no reacciona a su propia acción."), code="own")
        if not _may_read_action(access, locked.action):
            raise PermissionDenied(_("No puedes ver la acción a la que reaccionarías."))
        action_post = locked.action.post
        private_post = (
            action_post if action_post is not None and action_post.recipients != Post.Recipients.ALL else None
        )
        setup = rolls.roll_setup(
            locked.target,
            attribute=attribute,
            modifier=modifier,
            tool_id=tool_id,
            hero_point=hero_point,
            with_experience=with_experience,
        )
        actor = locked.action.character.name if locked.action.character else ""
        purpose = _("Reacción de %(target)s a %(actor)s") % {"target": locked.target.name, "actor": actor}
        table_roll = rolls.make_roll(
            campaign=locked.action.campaign,
            user=access.user,
            setup=setup,
            purpose=purpose,
            character=locked.target,
            scene=locked.action.scene,
            post=private_post,
            client_seed=client_seed,
            kind="reaction",
        )
        locked.roll = table_roll
        locked.save(update_fields=["roll"])
        deadlines.withdraw(DEADLINE_KIND, locked.pk)
    return table_roll


def _may_read_action(access: Access, action) -> bool:
    """Whether the reader may read the action's roll (its post, its scene)."""
    from table.access import may_read_table_roll

    return may_read_table_roll(access, action)


def decline(*, reaction: AventurasReaction, access: Access) -> None:
    """A14 — «No reaccionar»: the target makes no defence roll."""
    if not controls(access, reaction.target):
        raise PermissionDenied(_("Solo quien lleva a %(name)s decide si reacciona.") % {"name": reaction.target.name})
    with transaction.atomic():
        locked = _locked(reaction)
        locked.declined_at = timezone.now()
        locked.declined_by = access.user
        locked.save(update_fields=["declined_at", "declined_by"])
        deadlines.withdraw(DEADLINE_KIND, locked.pk, now=locked.declined_at)


def decline_unanswered(*, deadline: Deadline, actor) -> str:
    """A14 — the reaction's deadline passed unanswered and the direction
    settles it: the target does not react (reactions are optional, so this
    makes up nothing the player did). Inside the caller's transaction, which
    records the deadline as settled by ``actor``; the reaction records who
    declined it. Returns the sentence recorded."""
    reaction = AventurasReaction.objects.filter(pk=deadline.target_id, action__campaign_id=deadline.campaign_id).first()
    if reaction is None:
        raise ValidationError(_("Esa reacción ya no existe."), code="gone")
    locked = _locked(reaction)
    if not campaign_access(actor, locked.action.campaign).is_gm:
        raise ValidationError(_("Solo la dirección resuelve un plazo vencido."), code="gm")
    locked.declined_at = timezone.now()
    locked.declined_by = actor
    locked.save(update_fields=["declined_at", "declined_by"])
    return _("%(actor)s: %(name)s no reacciona a «%(purpose)s» (venció el plazo sin respuesta).") % {
        "actor": actor.public_name,
        "name": locked.target.name,
        "purpose": locked.action.first.purpose if locked.action.first_id else "",
    }


def _difficulty(table_roll) -> int:
    if table_roll.difficulty is not None:
        return table_roll.difficulty
    return int((table_roll.facts or {}).get("difficulty") or 0)


def result(action_tally: aventuras.Tally, reaction_tally: aventuras.Tally | None, difficulty: int) -> dict[str, Any]:
    """One target's outcome (A15–A17) as the card shows it."""
    res = aventuras.resolve_reaction(action_tally, reaction_tally, difficulty, order=ORDER)
    defended = reaction_tally.successes if reaction_tally is not None else 0
    return {
        # A15 — the action must beat the greater of the two.
        "counted": max(difficulty, defended),
        "by_reaction": defended > difficulty,
        "blocked": res.blocked,
        "succeeded": res.succeeded,
        "remaining": res.remaining,
        "chachis": res.chachis,
    }


def _readable_roll_ids(table_rolls, access) -> set[int]:
    """The ids of ``table_rolls`` whose content the reader may see (one query)."""
    from rolls.models import RollEntry
    from rolls.permissions import readable_rolls

    if not table_rolls:
        return set()
    entries = RollEntry.objects.filter(pk__in=[tr.first_id for tr in table_rolls])
    seen = set(readable_rolls(access, entries).values_list("pk", flat=True))
    return {tr.pk for tr in table_rolls if tr.first_id in seen}


def card_reactions(table_rolls, *, access) -> dict[int, dict]:
    """Per action roll id, what its card shows of its reactions, in constant
    queries: each target waiting, declined or with its roll's card, the
    result once the action and the reaction (or the decline) are final, and
    for the reader who answers for a target, «Reaccionar» and «No reaccionar»."""
    from systems.aventuras import cards
    from systems.aventuras.contests.forms import ReactForm
    from systems.aventuras.rolls import services as rolls

    by_id = {tr.pk: tr for tr in table_rolls}
    if not by_id:
        return {}
    reactions = list(
        AventurasReaction.objects.filter(action_id__in=by_id)
        .select_related(
            "target__aventuras",
            "roll__first__user",
            "roll__latest__user",
            "roll__owner",
            "roll__character",
        )
        .prefetch_related("target__aventuras__tools")
        .order_by("id")
    )
    if not reactions:
        return {}
    reaction_rolls = [r.roll for r in reactions if r.roll is not None]
    # Only the reaction rolls this reader may read show their dice (one
    # query): a reaction sealed for a post's recipients shows, to anyone
    # else, that the target reacted and the outcome, never the numbers.
    readable = _readable_roll_ids(reaction_rolls, access)
    roll_cards = cards.cards_for([r for r in reaction_rolls if r.pk in readable], access=access) if readable else {}
    out: dict[int, dict] = {}
    for reaction in reactions:
        action = by_id[reaction.action_id]
        hidden = action.difficulty_hidden and not access.is_gm
        row: dict[str, Any] = {"reaction": reaction, "target": reaction.target, "result": None}
        row["private"] = reaction.roll is not None and reaction.roll_id not in readable
        if reaction.roll is not None:
            row["state"] = "rolled"
            row["card"] = roll_cards.get(reaction.roll_id)
        elif reaction.declined_at is not None:
            row["state"] = "declined"
        else:
            row["state"] = "waiting"
        action_final = rolls.is_final(action)
        reaction_done = reaction.declined_at is not None or (
            reaction.roll is not None and rolls.is_final(reaction.roll)
        )
        if action_final and reaction_done:
            reaction_tally = rolls.roll_tally(reaction.roll) if reaction.roll is not None else None
            row["result"] = result(rolls.roll_tally(action), reaction_tally, _difficulty(action))
            row["result"]["hidden"] = hidden and not row["result"]["by_reaction"]
            row["result"]["private"] = row["private"]
        row["can_answer"] = reaction.open and controls(access, reaction.target)
        if reaction.open and access.is_gm and not reaction.target.is_npc:
            row["deadline_url"] = reverse("aventuras:reaction-deadline", args=[access.campaign.slug, reaction.pk])
        if row["can_answer"]:
            row["form"] = ReactForm(character=reaction.target, prefix=f"reaccion-{reaction.pk}")
            args = [access.campaign.slug, reaction.pk]
            row["roll_url"] = reverse("aventuras:reaction-roll", args=args)
            row["decline_url"] = reverse("aventuras:reaction-decline", args=args)
        entry = out.setdefault(action.pk, {"action": action, "rows": []})
        entry["rows"].append(row)
    return out
