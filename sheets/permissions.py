"""Who may see and change a sheet, written once.

Built on ``campaigns.permissions.Access``. The views turn "may not even see
it" into 404 and "may see it but not do this" into 403.
"""

from __future__ import annotations

from campaigns.permissions import Access, can_view_campaign, writable
from sheets.models import CampaignSheetOptions, Character


def sheet_options(campaign) -> CampaignSheetOptions:
    """The campaign's sheet options (an unsaved default when never set)."""
    try:
        return campaign.sheet_options
    except CampaignSheetOptions.DoesNotExist:
        return CampaignSheetOptions(campaign=campaign)


def is_owner(access: Access, character: Character) -> bool:
    return (
        access.is_member
        and not character.is_npc
        and access.user.is_authenticated
        and character.owner_id == access.user.pk
    )


def sees_public_sheets(access: Access, options: CampaignSheetOptions) -> bool:
    """Whether approved player characters' public part is shown to this user."""
    if access.is_gm:
        return True
    if options.visibility == CampaignSheetOptions.Visibility.MEMBERS:
        return access.is_member
    if options.visibility == CampaignSheetOptions.Visibility.PUBLIC:
        return can_view_campaign(access)
    return False


def can_see_sheet(access: Access, character: Character, options: CampaignSheetOptions) -> bool:
    """The public part: name, concept, traits, hitos, description, meter states."""
    if access.is_gm or is_owner(access, character):
        return True
    if character.is_npc or character.status != Character.Status.APPROVED:
        return False
    return sees_public_sheets(access, options)


def can_see_private(access: Access, character: Character) -> bool:
    """Everything but the GM notes: numbers, skills, notes, history, export."""
    return access.is_gm or is_owner(access, character)


def can_see_gm_notes(access: Access) -> bool:
    return access.is_gm


def can_create_sheet(access: Access) -> bool:
    return writable(access) and (access.is_player or access.is_gm)


def can_edit_sheet(access: Access, character: Character) -> bool:
    """Until approval the owner edits; afterwards (and while it waits for the
    review) only the GM, except the notes (``can_edit_notes``)."""
    if not writable(access):
        return False
    return access.is_gm or (is_owner(access, character) and character.is_editable_by_owner)


def can_edit_notes(access: Access, character: Character) -> bool:
    return writable(access) and can_see_private(access, character)


def can_submit(access: Access, character: Character) -> bool:
    return writable(access) and is_owner(access, character) and character.is_editable_by_owner


def can_review(access: Access) -> bool:
    return writable(access) and access.is_gm


def can_manage_sheets(access: Access) -> bool:
    """NPCs, new session / scene, the campaign's sheet options."""
    return access.is_gm


def can_play_character(access: Access, character) -> bool:
    """Acts for ``character`` at the table (attacks with it, rolls its tests,
    pays its aspects): the GM for anyone, a player for their own player
    character only."""
    if access.is_gm:
        return True
    return (
        access.is_player
        and character is not None
        and character.kind == Character.Kind.PC
        and character.owner_id == access.user.pk
    )
