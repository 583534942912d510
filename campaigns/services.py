"""Writes that span models: each runs in one transaction and records what
moderation needs (revisions, the moderation log, notifications)."""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from accounts.models import User
from campaigns import extensions, notify, signals
from campaigns.markup import render_markdown
from campaigns.models import (
    Application,
    Campaign,
    Invitation,
    Membership,
    ModerationAction,
    ModerationLog,
    Notification,
    Post,
    PostReport,
    PostRevision,
    Role,
    Scene,
    SceneRead,
)
from campaigns.permissions import (
    Access,
    can_edit_post,
    can_post_in_scene,
    can_write_as_character,
    can_write_as_npc,
)

# Addresses under /partidas/ that are pages, not campaigns.
RESERVED_SLUGS = frozenset({"nueva", "importar"})


def _unique_slug(title: str) -> str:
    base = slugify(title)[:70] or "partida"
    slug, n = base, 2
    while slug in RESERVED_SLUGS or Campaign.objects.filter(slug=slug).exists():
        slug = f"{base}-{n}"
        n += 1
    return slug


def _log(campaign, actor, action, *, reason="", target_user=None, post=None, scene=None) -> ModerationLog:
    return ModerationLog.objects.create(
        campaign=campaign, actor=actor, action=action, reason=reason, target_user=target_user, post=post, scene=scene
    )


@transaction.atomic
def campaign_create(
    *, gm, title: str, system: str, visibility: str, description: str = "", status=None, **options
) -> Campaign:
    """Create a campaign with its off-game scene. ``options``: the other
    fields of the campaign form (time zone, pace, whom "whose turn" lists)."""
    campaign = Campaign(
        gm=gm,
        title=title,
        slug=_unique_slug(title),
        system=system,
        visibility=visibility,
        description=description,
        description_html=render_markdown(description),
        **options,
    )
    if status:
        campaign.status = status
    campaign.full_clean()
    campaign.save()
    # Apps above the forum start their part of the campaign in this transaction
    # (the roll log opens its first epoch before anyone can choose a client seed).
    signals.campaign_created.send(sender=Campaign, campaign=campaign)
    Scene.objects.create(
        campaign=campaign,
        title=_("Fuera de juego"),
        description=_("Para hablar de la partida fuera de la historia: dudas, ausencias, reglas."),
        description_html=render_markdown(
            _("Para hablar de la partida fuera de la historia: dudas, ausencias, reglas.")
        ),
        is_offgame=True,
        position=0,
    )
    return campaign


def campaign_update(*, campaign: Campaign, **fields) -> Campaign:
    """Change these fields (only these: a column another writer changes under
    its lock, like the game's state, is never written back stale)."""
    for name, value in fields.items():
        setattr(campaign, name, value)
    saved = list(fields)
    if "description" in fields:
        campaign.description_html = render_markdown(campaign.description)
        saved.append("description_html")
    campaign.full_clean()
    campaign.save(update_fields=saved)
    return campaign


@transaction.atomic
def application_create(*, campaign: Campaign, user, text: str) -> Application:
    """Ask to join a campaign that is recruiting; the GM and co-GMs are told
    and decide (``application_decide``). Someone with an invitation link
    needs no application (``invitation_accept``)."""
    application = Application(campaign=campaign, user=user, text=text, role=Role.PLAYER)
    try:
        with transaction.atomic():
            application.save()
    except IntegrityError:
        raise ValidationError(_("Ya tienes una solicitud pendiente en esta partida.")) from None
    notify.application_received(application)
    return application


def _member_again_or_anew(campaign: Campaign, user, *, role: str) -> Membership:
    """``user`` becomes an active member with ``role``: someone who had left
    or was removed comes back (``Membership.rejoin``), anyone else joins."""
    membership = Membership.objects.filter(campaign=campaign, user=user).first()
    if membership is None:
        return Membership.objects.create(campaign=campaign, user=user, role=role)
    if membership.status == Membership.Status.ACTIVE:
        membership.role = role
        membership.save(update_fields=["role"])
    else:
        membership.rejoin(role=role)
        membership.save(update_fields=Membership.REJOIN_FIELDS)
    return membership


@transaction.atomic
def application_decide(*, application: Application, actor, accept: bool, answer: str = "") -> Application:
    """Accept (the applicant becomes a member with the application's role) or
    reject; the applicant is told either way and the decision is logged."""
    application = Application.objects.select_for_update().get(pk=application.pk)
    if application.status != Application.Status.PENDING:
        raise ValidationError(_("Esta solicitud ya se resolvió."))
    application.status = Application.Status.ACCEPTED if accept else Application.Status.REJECTED
    application.answer = answer
    application.decided_by = actor
    application.decided_at = timezone.now()
    application.save(update_fields=["status", "answer", "decided_by", "decided_at"])
    if accept:
        _member_again_or_anew(application.campaign, application.user, role=application.role)
    _log(
        application.campaign,
        actor,
        ModerationAction.APPLICATION_ACCEPTED if accept else ModerationAction.APPLICATION_REJECTED,
        reason=answer,
        target_user=application.user,
    )
    notify.application_decided(application)
    return application


def invitation_create(*, campaign: Campaign, actor, role: str, days: int, max_uses: int) -> Invitation:
    invitation = Invitation(
        campaign=campaign,
        created_by=actor,
        role=role,
        expires_at=timezone.now() + timedelta(days=days),
        max_uses=max_uses,
    )
    invitation.full_clean()
    invitation.save()
    return invitation


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user) -> Membership:
    """``user`` joins the campaign through an invitation link: the link is the
    GM's consent, so nobody has to approve it.

    Refused (``ValidationError``, with its ``code``) for the campaign's GM or
    an active member (``"member"``: nothing changes, no use is spent), for
    someone the direction removed (``"removed"``: an invitation does not undo
    that) and when the invitation is revoked, expired or used up
    (``"unusable"``). Side effects: the invitation spends one use (under its
    row's lock, so two people never take its last use and a repeated click
    spends nothing: the second finds the member); the user becomes an active
    member with the invitation's role (someone who had left comes back); an
    application of theirs still pending is withdrawn; the GM and co-GMs are
    told."""
    # Lock the invitation first: whatever runs for it after this waits here.
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    campaign = Campaign.objects.select_related("gm").get(pk=invitation.campaign_id)
    membership = Membership.objects.filter(campaign=campaign, user=user).first()
    if membership is not None:
        membership.campaign, membership.user = campaign, user
    if campaign.gm_id == user.pk or (membership is not None and membership.status == Membership.Status.ACTIVE):
        raise ValidationError(_("Ya formas parte de esta partida."), code="member")
    if membership is not None and membership.status == Membership.Status.REMOVED:
        raise ValidationError(
            _(
                "La dirección te expulsó de esta partida y una invitación no basta para volver. "
                "Si crees que es un error, habla con quien la dirige."
            ),
            code="removed",
        )
    if not invitation.is_usable:
        raise ValidationError(_("Esta invitación ya no se puede usar."), code="unusable")
    invitation.uses += 1
    invitation.save(update_fields=["uses"])
    if membership is None:
        membership = Membership(campaign=campaign, user=user, role=invitation.role)
        membership.full_clean(validate_constraints=False)
        try:
            with transaction.atomic():
                membership.save()
        except IntegrityError:
            # Another invitation let them in at the same moment.
            raise ValidationError(_("Ya formas parte de esta partida."), code="member") from None
    else:
        membership.rejoin(role=invitation.role)
        membership.full_clean(validate_constraints=False)
        membership.save(update_fields=Membership.REJOIN_FIELDS)
    # An application waiting for the GM's answer has nothing left to ask.
    Application.objects.filter(campaign=campaign, user=user, status=Application.Status.PENDING).update(
        status=Application.Status.WITHDRAWN
    )
    _tell_the_direction_someone_joined(membership)
    return membership


def _tell_the_direction_someone_joined(membership: Membership) -> None:
    campaign = membership.campaign
    directors = User.objects.filter(pk__in=notify.gm_ids(campaign), is_active=True).order_by("pk")

    def text() -> str:
        return _("%(user)s se ha unido a «%(campaign)s» con una invitación (papel: %(role)s).") % {
            "user": membership.user.public_name,
            "campaign": campaign.title,
            "role": membership.get_role_display(),
        }

    notify.notify_users(
        directors,
        campaign=campaign,
        kind=Notification.Kind.APPLICATION,
        url=reverse("campaigns:dashboard", args=[campaign.slug]),
        text=text,
    )


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor) -> None:
    invitation.revoked = True
    invitation.save(update_fields=["revoked"])
    _log(invitation.campaign, actor, ModerationAction.INVITATION_REVOKED)


def membership_leave(*, membership: Membership) -> None:
    membership.status = Membership.Status.LEFT
    membership.ended_at = timezone.now()
    membership.save(update_fields=["status", "ended_at"])


@transaction.atomic
def member_remove(*, membership: Membership, actor, reason: str) -> None:
    """The member loses access; their posts stay, attributed to them."""
    membership.status = Membership.Status.REMOVED
    membership.ended_at = timezone.now()
    membership.save(update_fields=["status", "ended_at"])
    _log(membership.campaign, actor, ModerationAction.MEMBER_REMOVED, reason=reason, target_user=membership.user)
    notify.moderation(
        membership.campaign,
        membership.user,
        # Written in each language the member may read the notice in.
        lambda: _("Te han expulsado de la partida. Motivo: %(reason)s") % {"reason": reason},
    )


@transaction.atomic
def member_set_role(*, membership: Membership, actor, role: str) -> None:
    membership.role = role
    membership.full_clean()
    membership.save(update_fields=["role"])
    _log(
        membership.campaign,
        actor,
        ModerationAction.MEMBER_ROLE,
        reason=membership.get_role_display(),
        target_user=membership.user,
    )


@transaction.atomic
def campaign_hand_over(*, campaign: Campaign, actor, membership: Membership) -> Campaign:
    """The member becomes the GM; the previous GM stays on as a co-GM."""
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if membership.campaign_id != campaign.pk or membership.status != Membership.Status.ACTIVE:
        raise ValidationError(_("Solo puedes ceder la partida a un miembro activo."))
    previous = campaign.gm
    new_gm = membership.user
    membership.delete()
    _member_again_or_anew(campaign, previous, role=Role.COGM)
    campaign.gm = new_gm
    campaign.save(update_fields=["gm"])
    _log(campaign, actor, ModerationAction.CAMPAIGN_HANDED_OVER, target_user=new_gm)
    notify.moderation(campaign, new_gm, lambda: _("Ahora diriges la partida «%(title)s».") % {"title": campaign.title})
    return campaign


@transaction.atomic
def scene_create(
    *,
    campaign: Campaign,
    title: str,
    description: str = "",
    everyone: bool = True,
    participants=(),
    game_values: dict | None = None,
    position: int | None = None,
    actor=None,
) -> Scene:
    """A new scene, told to the apps above the forum (``signals.scene_created``:
    the game ends what lasted a scene), by ``actor`` (the campaign's GM when
    not given). ``game_values``: the game's own fields of the scene form
    (``extensions.SceneFields``)."""
    if position is None:
        last = campaign.scenes.order_by("-position").values_list("position", flat=True).first()
        position = (last or 0) + 1
    scene = Scene(
        campaign=campaign,
        title=title,
        description=description,
        description_html=render_markdown(description),
        everyone=everyone,
        position=position,
    )
    scene.full_clean()
    scene.save()
    scene.participants.set(participants)
    extensions.scene_saved(scene, game_values or {})
    signals.scene_created.send(sender=Scene, scene=scene, actor=actor or campaign.gm)
    return scene


@transaction.atomic
def scene_update(
    *,
    scene: Scene,
    actor,
    title: str,
    description: str,
    everyone: bool,
    participants,
    status: str,
    position: int,
    game_values: dict | None = None,
) -> Scene:
    # Read the status from the database: a ModelForm has already written the
    # new one on the instance it validated.
    old_status = Scene.objects.filter(pk=scene.pk).values_list("status", flat=True).get()
    scene.title = title
    scene.description = description
    scene.description_html = render_markdown(description)
    scene.everyone = everyone
    scene.status = status
    scene.position = position
    scene.full_clean()
    scene.save()
    scene.participants.set(participants)
    extensions.scene_saved(scene, game_values or {})
    if status != old_status:
        _log(scene.campaign, actor, ModerationAction.SCENE_STATUS, scene=scene, reason=scene.get_status_display())
    return scene


@transaction.atomic
def post_create(
    *,
    access: Access,
    scene: Scene,
    voice: str,
    body: str,
    note: str = "",
    character=None,
    npc_name: str = "",
    recipients: str = Post.Recipients.ALL,
    chosen=(),
    quote_of: Post | None = None,
    submission_key: str | None = None,
) -> Post:
    """Publish a post. ``submission_key`` (made when the form was shown) makes
    a repeated submission of the same form return the post it already made.
    Side effects: the post, the author's read marker, notifications."""
    post, created = post_insert(
        access=access,
        scene=scene,
        voice=voice,
        body=body,
        note=note,
        character=character,
        npc_name=npc_name,
        recipients=recipients,
        chosen=chosen,
        quote_of=quote_of,
        submission_key=submission_key,
    )
    if created:
        post_published(post, access=access)
    return post


def post_allowed(*, access: Access, scene: Scene, voice: str, character=None) -> None:
    """Refuse (``PermissionDenied``) a post its author may not write: in this
    scene, as an NPC, or as this character."""
    if not can_post_in_scene(access, scene):
        raise PermissionDenied(_("No puedes escribir en esta escena."))
    if voice == Post.Voice.NPC and not can_write_as_npc(access):
        raise PermissionDenied(_("Solo la dirección puede escribir como PNJ."))
    if voice == Post.Voice.CHARACTER and not can_write_as_character(access, character):
        raise PermissionDenied(_("Solo puedes escribir como uno de tus personajes aprobados."))


def post_insert(
    *,
    access: Access,
    scene: Scene,
    voice: str,
    body: str,
    note: str = "",
    character=None,
    npc_name: str = "",
    recipients: str = Post.Recipients.ALL,
    chosen=(),
    quote_of: Post | None = None,
    submission_key: str | None = None,
    on_behalf_of=None,
) -> tuple[Post, bool]:
    """The post row and its chosen recipients, inside the caller's transaction
    (the table adds its rolls to the same one): ``(post, created)``, where a
    replayed ``submission_key`` gives the post already made and ``False``.
    ``post_published`` finishes the job.

    ``on_behalf_of``: the owner of ``character`` when the author plays it for
    them (the table checked, under its lock, that a takeover allows it): the
    character need not be the author's own, and the post names its owner."""
    if on_behalf_of is None:
        post_allowed(access=access, scene=scene, voice=voice, character=character)
    elif not can_post_in_scene(access, scene):
        raise PermissionDenied(_("No puedes escribir en esta escena."))
    if submission_key:
        existing = Post.objects.filter(author=access.user, submission_key=submission_key).first()
        if existing is not None:
            return existing, False
    post = Post(
        scene=scene,
        author=access.user,
        voice=voice,
        character=character if voice == Post.Voice.CHARACTER else None,
        npc_name=npc_name if voice == Post.Voice.NPC else "",
        body=body,
        body_html=render_markdown(body),
        note=note,
        note_html=render_markdown(note),
        recipients=recipients,
        quote_of=quote_of,
        submission_key=submission_key or None,
        on_behalf_of=on_behalf_of,
    )
    post.full_clean(validate_constraints=False)
    try:
        with transaction.atomic():
            post.save()
    except IntegrityError:
        # The same form arrived twice at once: the other request published it.
        if not submission_key:
            raise
        return Post.objects.get(author=access.user, submission_key=submission_key), False
    if recipients == Post.Recipients.CHOSEN:
        post.chosen_recipients.set(chosen)
    return post, True


def post_published(post: Post, *, access: Access) -> None:
    """After a new post (and whatever the table added to it): the author has
    read their own post, and its readers are told."""
    scene_mark_read(user=access.user, scene=post.scene, last_post_id=post.pk)
    notify.post_created(post)


@transaction.atomic
def post_edit(*, access: Access, post: Post, body: str, note: str, reason: str = "") -> Post:
    """Keep the previous text as a revision; an edit by someone other than
    the author is also written to the moderation log."""
    if not can_edit_post(access, post):
        raise PermissionDenied(
            _(
                "Solo su autor o la dirección pueden editar este mensaje; uno escrito en nombre de otro, solo la dirección."
            )
        )
    PostRevision.objects.create(
        post=post,
        editor=access.user,
        body=post.body,
        body_html=post.body_html,
        note=post.note,
        note_html=post.note_html,
        reason=reason,
    )
    post.body = body
    post.body_html = render_markdown(body)
    post.note = note
    post.note_html = render_markdown(note)
    post.edited_at = timezone.now()
    post.edited_by = access.user
    post.full_clean()
    post.save(update_fields=["body", "body_html", "note", "note_html", "edited_at", "edited_by"])
    if post.author_id != access.user.pk:
        _log(
            post.scene.campaign,
            access.user,
            ModerationAction.POST_EDITED,
            reason=reason,
            target_user=post.author,
            post=post,
        )
        notify.moderation(
            post.scene.campaign,
            post.author,
            lambda: (
                _("La dirección ha editado tu mensaje #%(id)s. Motivo: %(reason)s")
                % {"id": post.pk, "reason": reason or "—"}
            ),
            post=post,
        )
    return post


@transaction.atomic
def post_hide(*, post: Post, actor, reason: str) -> Post:
    post.hidden = True
    post.hidden_reason = reason
    post.hidden_by = actor
    post.hidden_at = timezone.now()
    post.save(update_fields=["hidden", "hidden_reason", "hidden_by", "hidden_at"])
    reports_resolve_by_hiding(post=post, actor=actor)
    _log(post.scene.campaign, actor, ModerationAction.POST_HIDDEN, reason=reason, target_user=post.author, post=post)
    notify.moderation(
        post.scene.campaign,
        post.author,
        lambda: (
            _("La dirección ha ocultado tu mensaje #%(id)s. Motivo: %(reason)s") % {"id": post.pk, "reason": reason}
        ),
        post=post,
    )
    return post


@transaction.atomic
def post_show(*, post: Post, actor, reason: str = "") -> Post:
    post.hidden = False
    post.save(update_fields=["hidden"])
    _log(post.scene.campaign, actor, ModerationAction.POST_SHOWN, reason=reason, target_user=post.author, post=post)
    return post


@transaction.atomic
def post_report(*, post: Post, reporter, reason: str) -> PostReport:
    """A member reports a post to the direction.

    Side effects: the GM and the active co-GMs are notified (kind REPORT,
    linking to the dashboard's reports), and the campaign page's count of
    pending reports moves (``PostReport`` is tracked by ``campaigns.fragments``).
    """
    report = PostReport(post=post, reporter=reporter, reason=reason)
    report.full_clean()
    report.save()
    notify.report_received(report)
    return report


@transaction.atomic
def report_resolve(*, report: PostReport, actor, reason: str = "") -> None:
    """The direction closes a report and leaves the post as it is (to hide
    it they use ``post_hide``, which closes its reports through
    ``reports_resolve_by_hiding``).

    Side effects: the moderation log records it with ``reason``; the
    reporter is told the outcome, without the reason; the campaign page's
    count of pending reports moves.
    """
    report.resolved_by = actor
    report.resolved_at = timezone.now()
    report.save(update_fields=["resolved_by", "resolved_at"])
    _log(
        report.post.scene.campaign,
        actor,
        ModerationAction.REPORT_RESOLVED,
        reason=reason,
        target_user=report.post.author,
        post=report.post,
    )
    # A post hidden since it was reported: that is what the reporter hears.
    notify.report_decided(report, hidden=report.post.hidden)


@transaction.atomic
def reports_resolve_by_hiding(*, post: Post, actor) -> list[PostReport]:
    """Close the pending reports of ``post``, which the direction has just
    hidden (``post_hide`` calls it inside its transaction), and tell each
    member who reported it, once, that it was hidden. Each report is saved
    on its own (a post has few), so the campaign page's count moves."""
    pending = list(PostReport.objects.filter(post=post, resolved_at__isnull=True).select_related("reporter"))
    now = timezone.now()
    told: set[int] = set()
    for report in pending:
        report.post = post
        report.resolved_by = actor
        report.resolved_at = now
        report.save(update_fields=["resolved_by", "resolved_at"])
        if report.reporter_id not in told:
            told.add(report.reporter_id)
            notify.report_decided(report, hidden=True)
    return pending


def scene_mark_read(*, user, scene: Scene, last_post_id: int) -> None:
    """Move the user's read marker forward (never back)."""
    if not user.is_authenticated or not last_post_id:
        return
    read, created = SceneRead.objects.get_or_create(scene=scene, user=user, defaults={"last_post_id": last_post_id})
    if not created and read.last_post_id < last_post_id:
        SceneRead.objects.filter(pk=read.pk, last_post_id__lt=last_post_id).update(last_post_id=last_post_id)


def campaign_export(*, access: Access) -> dict:
    """A JSON-ready archive of what the user can read of the campaign
    (``hitos-campaign-export/2``, built by ``campaigns.archive``)."""
    from campaigns import archive

    return archive.campaign_export(access=access)
