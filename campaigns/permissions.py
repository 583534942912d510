"""Who may do what in a campaign, written once (ARCHITECTURE.md's matrix).

Views and services compute one ``Access`` per request and ask these small
predicates; templates only read their answers. Outsiders get 404 for private
things, members without the right get 403 (the views decide which).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from django.db.models import Exists, OuterRef, Q

from campaigns.models import Campaign, CampaignStatus, Membership, Post, Role, Scene, Visibility


class Standing(StrEnum):
    ANONYMOUS = "anonymous"
    OUTSIDER = "outsider"
    READER = "reader"
    PLAYER = "player"
    COGM = "cogm"
    GM = "gm"


@dataclass(frozen=True)
class Access:
    user: object
    campaign: Campaign
    standing: Standing
    membership: Membership | None = None

    @property
    def is_gm(self) -> bool:
        """The GM or a co-GM: everything in the campaign."""
        return self.standing in (Standing.GM, Standing.COGM)

    @property
    def is_owner(self) -> bool:
        return self.standing == Standing.GM

    @property
    def is_member(self) -> bool:
        return self.standing in (Standing.GM, Standing.COGM, Standing.PLAYER, Standing.READER)

    @property
    def is_player(self) -> bool:
        return self.standing == Standing.PLAYER


def campaign_access(user, campaign: Campaign) -> Access:
    """The user's standing in the campaign (one query for members)."""
    if not user.is_authenticated:
        return Access(user, campaign, Standing.ANONYMOUS)
    if campaign.gm_id == user.pk:
        return Access(user, campaign, Standing.GM)
    membership = Membership.objects.active().filter(campaign=campaign, user=user).first()
    if membership is None:
        return Access(user, campaign, Standing.OUTSIDER)
    standing = {Role.COGM: Standing.COGM, Role.PLAYER: Standing.PLAYER, Role.READER: Standing.READER}[membership.role]
    return Access(user, campaign, standing, membership)


def writable(access: Access) -> bool:
    """The campaign takes writes at all: not a read-only copy made from an
    archive (``Campaign.read_only``). Every predicate of a write asks it, and
    ``campaigns.access.campaign_for`` refuses any other method than reading
    on such a copy."""
    return not access.campaign.read_only


def can_view_campaign(access: Access) -> bool:
    return access.is_member or access.campaign.visibility == Visibility.PUBLIC


def can_apply(access: Access) -> bool:
    return (
        writable(access)
        and access.standing == Standing.OUTSIDER
        and access.campaign.status == CampaignStatus.RECRUITING
    )


def can_join_by_invitation(access: Access) -> bool:
    """A signed-in user who is not in the campaign may follow an invitation
    link into it (``was_removed`` says who the link cannot bring back)."""
    return writable(access) and access.standing == Standing.OUTSIDER


def was_removed(access: Access) -> bool:
    """An outsider the direction removed from the campaign: an invitation
    link does not undo that (one query)."""
    return (
        access.standing == Standing.OUTSIDER
        and Membership.objects.filter(
            campaign=access.campaign, user=access.user, status=Membership.Status.REMOVED
        ).exists()
    )


def can_manage(access: Access) -> bool:
    """Scenes, members, invitations, moderation, campaign options."""
    return writable(access) and access.is_gm


def can_hand_over(access: Access) -> bool:
    return writable(access) and access.is_owner


def can_leave(access: Access) -> bool:
    return access.is_member and not access.is_owner


def can_view_scene(access: Access, scene: Scene, participant_ids: set[int]) -> bool:
    if access.is_gm:
        return True
    if access.is_member:
        return scene.everyone or access.user.pk in participant_ids
    return access.campaign.visibility == Visibility.PUBLIC and scene.everyone


def visible_scenes(access: Access):
    """The scenes of the campaign the user may read (a QuerySet)."""
    return Scene.objects.visible_to(access.user, access.campaign, is_gm=access.is_gm, is_member=access.is_member)


def sees_scene(access: Access, scene_field: str = "scene_id") -> Exists:
    """Whether the reader may open a row's scene (``scene_field``), as an
    expression to annotate or filter a QuerySet with (no query of its own):
    a ledger, a history or a notice names a scene only where it says so."""
    return Exists(visible_scenes(access).filter(pk=OuterRef(scene_field)))


def seen_scene_ids(access: Access, scene_ids) -> set[int]:
    """Of ``scene_ids`` (scenes of the access's campaign), those the reader
    may open (one query; none when empty or for the direction, who sees all)."""
    scene_ids = {pk for pk in scene_ids if pk is not None}
    if not scene_ids or access.is_gm:
        return scene_ids
    return set(visible_scenes(access).filter(pk__in=scene_ids).values_list("pk", flat=True))


def can_read_post(access: Access, post: Post) -> bool:
    """The post is in a scene the user sees and is addressed to them (whispers
    say no); hidden posts still count, their text is ``can_see_hidden_text``."""
    if not can_view_campaign(access) or not visible_scenes(access).filter(pk=post.scene_id).exists():
        return False
    return Post.objects.filter(pk=post.pk).addressed_to(access.user, is_gm=access.is_gm).exists()


def readable_posts(access: Access):
    """Posts of the campaign the user may read, text included (a QuerySet):
    in scenes they see, addressed to them, and not hidden unless theirs or
    they are the GM."""
    posts = Post.objects.filter(scene__in=visible_scenes(access)).addressed_to(access.user, is_gm=access.is_gm)
    if not access.is_gm:
        mine = Q(author=access.user) if access.user.is_authenticated else Q(pk__in=[])
        posts = posts.filter(Q(hidden=False) | mine)
    return posts


def can_post_in_scene(access: Access, scene: Scene) -> bool:
    """Players write in open scenes; the GM also in locked ones; nobody in archived ones."""
    if scene.status == Scene.Status.ARCHIVED or not writable(access):
        return False
    if access.is_gm:
        return True
    return access.is_player and scene.status == Scene.Status.OPEN


def can_write_as_npc(access: Access) -> bool:
    return writable(access) and access.is_gm


def can_write_as_character(access: Access, character) -> bool:
    """Only as a character that says this user may voice it in this campaign
    (the character model answers: ``may_be_voiced_by``)."""
    return character is not None and character.may_be_voiced_by(access.user, access.campaign)


def can_play(access: Access) -> bool:
    """Takes part at the table: rolls and answers the game's moves (the GM,
    co-GMs and players; never readers or outsiders)."""
    return writable(access) and (access.is_gm or access.is_player)


def can_edit_post(access: Access, post: Post) -> bool:
    """The direction edits every post; a member their own, while the scene
    is not archived. A post written for an absent owner (``on_behalf_of``)
    puts words in a character's mouth that are not its author's: only the
    direction edits it (its author's takeover may have ended, and the owner
    did not write it). Nobody edits a read-only copy."""
    if not writable(access):
        return False
    if access.is_gm:
        return True
    # ``post`` may also be a page's summary of a post (``table.post_list.PostFacts``).
    if post.scene.status == Scene.Status.ARCHIVED or post.on_behalf_of_id is not None:
        return False
    return access.is_member and post.author_id == access.user.pk


def can_see_hidden_text(access: Access, post: Post) -> bool:
    return access.is_gm or (access.user.is_authenticated and post.author_id == access.user.pk)


def can_see_revisions(access: Access, post: Post) -> bool:
    return can_see_hidden_text(access, post)


def can_hide_post(access: Access) -> bool:
    return writable(access) and access.is_gm


def can_report_post(access: Access, post: Post) -> bool:
    return writable(access) and access.is_member and not access.is_gm and post.author_id != access.user.pk


def can_search(access: Access) -> bool:
    return can_view_campaign(access)


def can_export(access: Access) -> bool:
    return access.is_member
