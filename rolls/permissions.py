"""Which rolls are private and who may read them: written once.

A roll is sealed (rollog v1.1 §3.7) when not every reader of its campaign's
log may read it: a roll in a post to chosen members or to the GM only, in a
scene only some members see, or a secret roll of the GM. Its content
(purpose, who rolled, character, scene, dice, result) reaches a reader only
if ``readable_rolls`` says so, and that is decided by the same predicates
that decide who may read its post or scene (``campaigns.permissions``); a
secret GM roll is the GM's alone until revealed, then its scene's.

Every surface that shows a roll asks here: the permalink page, its bundle,
badge and snippets, the roll log and its export, cards in posts and on the
scene, feeds and notifications.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

from campaigns import permissions as perms
from campaigns.models import Post, Scene
from campaigns.permissions import Access
from rolls.models import RollEntry

Audience = RollEntry.Audience


def audience_for(*, post: Post | None = None, scene: Scene | None = None, secret: bool = False) -> str:
    """The audience of a new roll: "" (public) or the label of its seal."""
    if secret:
        return Audience.GM
    if post is not None and post.recipients != Post.Recipients.ALL:
        return Audience.RECIPIENTS
    if scene is None and post is not None:
        scene = post.scene
    if scene is not None and not scene.everyone:
        return Audience.SCENE
    return Audience.PUBLIC


def readable_rolls(access: Access, rolls: QuerySet | None = None) -> QuerySet:
    """The campaign's rolls whose content this reader may see.

    A roll belongs to its post (read as ``Post.objects.addressed_to`` says)
    and its scene (``perms.visible_scenes``); a secret GM roll needs the GM
    until it is revealed.
    """
    campaign = access.campaign
    rolls = (RollEntry.objects.rolls() if rolls is None else rolls).filter(campaign=campaign)
    if not perms.can_view_campaign(access):
        return rolls.filter(audience=Audience.PUBLIC)
    scenes = perms.visible_scenes(access)
    posts = Post.objects.filter(scene__campaign=campaign).addressed_to(access.user, is_gm=access.is_gm)
    rolls = rolls.filter(
        Q(scene__isnull=True) | Q(scene__in=scenes.values("pk")),
        Q(post__isnull=True) | Q(post__in=posts.values("pk")),
    )
    if not access.is_gm:
        rolls = rolls.exclude(audience=Audience.GM, reveal__isnull=True)
    return rolls


def can_read_roll(access: Access, entry: RollEntry) -> bool:
    """May this reader see the roll's content? A public roll is open to
    anyone holding its link; a sealed one only as ``readable_rolls`` says."""
    if not entry.is_sealed:
        return True
    return readable_rolls(access).filter(pk=entry.pk).exists()


def readable_ids(access: Access, entries) -> set[int]:
    """Of ``entries``, the ids whose content the reader may see (one query
    for the sealed ones, none when all are public)."""
    sealed = [e.pk for e in entries if e.is_sealed]
    public = {e.pk for e in entries if not e.is_sealed}
    if not sealed:
        return public
    return public | set(readable_rolls(access, RollEntry.objects.filter(pk__in=sealed)).values_list("pk", flat=True))
