"""HITOS damage codes above mCM (H51, issue 18): the extra d10s are drawn
through the signed log as one ``extend`` entry of the attack roll when the
damage is applied (roll-verification §3.6b), with the page's browser seed;
the damage is the rules' reading of the whole pool; the attack's card shows
the extension and its permalink verifies offline."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.urls import reverse

from campaigns.permissions import campaign_access
from rolls import services as roll_services
from rolls.models import RollEntry
from rolls.verify_roll import parse_public_key, verify_bundle
from rules import hitos
from rules.hitos_combat import attack_damage
from sheets.models import SheetEvent
from systems.hitos.checks.services import lock_table_roll, table_reroll
from systems.hitos.combat import services as combat_services
from systems.hitos.models import Attack, Combatant, HitosEvent, HitosSheet
from systems.hitos.sheet.forms import NpcForm, WeaponForm
from tests.conftest import client_for
from tests.factories import client_seed, plain_read

HTMX = {"HTTP_HX_REQUEST": "true"}


def gm(play):
    return campaign_access(play.gm, play.campaign)


def url(play, name, *args):
    return reverse(f"hitos:{name}", args=[play.campaign.slug, play.scene.pk, *args])


def start(play):
    return combat_services.combat_start(scene=play.scene, access=gm(play), characters=[play.ines, play.tomas, play.npc])


def combatant(combat, character) -> Combatant:
    return Combatant.objects.select_related("character", "combat").get(combat=combat, character=character)


def attack_with(play, combat, code, *, target=None, user=None):
    """Inés attacks (the target: the butler) with a melee weapon of ``code``."""
    weapon = play.ines.weapons.create(name="Maza de guerra", damage_code=code, melee=True)
    return combat_services.attack_make(
        combat=combat,
        access=campaign_access(user or play.gm, play.campaign),
        attacker=combatant(combat, play.ines),
        target=combatant(combat, target or play.npc),
        weapon=weapon,
    )


def extensions():
    return RollEntry.objects.filter(kind=RollEntry.Kind.EXTEND)


def fresh(attack) -> Attack:
    return Attack.objects.select_related("table_roll__latest", "table_roll__campaign").get(pk=attack.pk)


def expected_damage(attack: Attack, extension: RollEntry, code: str):
    """What the rules read from the extension's pool, worked out here from its
    signed dice alone."""
    dice = extension.entry["dice"]
    return attack_damage(
        hitos.HitosRoll(tuple(dice[:3])), code, bonus=attack.damage_bonus, rd=attack.rd, extra_dice=dice[3:]
    )


# --- the services ---------------------------------------------------------------------------


def test_sheets_take_codes_above_mcm_for_weapons_and_npcs_usual_attack():
    weapon = WeaponForm({"name": "Cañón", "damage_code": " mCM+2d10 ", "melee": "0", "notes": ""})
    assert weapon.is_valid(), weapon.errors
    assert weapon.cleaned_data["damage_code"] == "mCM+2d10"
    for code, message in (
        ("mCM+²d10", "Código de daño desconocido"),
        ("CM+1d10", "Código de daño desconocido"),
        ("mCM+98d10", "Demasiados dados adicionales"),
    ):
        refused = WeaponForm({"name": "Cañón", "damage_code": code, "melee": "0", "notes": ""})
        assert not refused.is_valid()
        assert message in refused.errors["damage_code"][0]
    npc = NpcForm({"damage_code": "mCM+1d10"})
    npc.is_valid()
    assert "damage_code" not in npc.errors and npc.cleaned_data["damage_code"] == "mCM+1d10"


def test_a_weapon_above_mcm_draws_its_extra_die_as_one_extension_when_the_damage_is_applied(play, dice):
    play.npc.hitos.rd = 2
    play.npc.hitos.save()
    combat = start(play)
    dice.append([9, 3, 7])  # Reflejos 6 + Combate 4 + C 7 = 17 against 13: a hit
    made = attack_with(play, combat, "mCM+1d10")
    # Nothing is drawn until the damage is applied: the damage waits for its die.
    pending = combat_services.attack_damage_for(fresh(made))
    assert isinstance(pending, combat_services.PendingDamage)
    assert (pending.code.text, pending.extra_dice) == ("mCM+1d10", 1)
    assert not extensions().exists()
    seed = client_seed()
    combat_services.damage_apply(attack=made, access=gm(play), client_seed=seed)
    extension = extensions().get()
    parent = made.table_roll.latest
    entry = extension.entry
    # One extend entry of the attack roll's latest version, with the page's seed.
    assert (extension.parent_id, entry["spec"], entry["client_seed"]) == (parent.pk, "1d10", seed)
    assert entry["client_seed_source"] == "browser"
    assert entry["dice"] == [9, 3, 7, *entry["drawn"]] and len(entry["drawn"]) == 1
    assert (entry["extra_damage_dice"], entry["damage_code"]) == (1, "mCM+1d10")
    assert extension.purpose == f"{parent.purpose}: los dados adicionales del daño mCM+1d10"
    # H51 — mCM of the roll (3 + 7 + 9) + the extra die, + bonus (5 + 4) ÷ 4 = 2 in melee, − RD 2.
    made = fresh(made)
    assert made.damage_applied == 19 + entry["drawn"][0] + 2 - 2
    assert made.damage_applied == expected_damage(made, extension, "mCM+1d10").total
    assert entry["game"]["damage"] == {
        "code": "mCM+1d10",
        "extra": entry["drawn"],
        "dice": 19 + entry["drawn"][0],
        "multiplier": 1,
        "bonus": 2,
        "rd": 2,
        "total": made.damage_applied,
    }
    # The check stays read from its three dice; the roll keeps its latest version.
    assert entry["game"]["success"] is True and made.table_roll.latest_id == parent.pk
    assert combat_services.attack_damage_for(made).total == made.damage_applied
    event = SheetEvent.objects.get(character=play.npc, kind=HitosEvent.DAMAGE)
    assert extension.get_absolute_url() in event.reason


def test_a_shift_above_mcm_reads_two_extra_dice(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack_with(play, combat, "mCM", user=play.ana)
    ana = campaign_access(play.ana, play.campaign)
    for aspect in ("Ágil como una gata", "Puntería"):
        combat_services.attack_shift(attack=made, access=ana, steps=1, aspect=aspect)
    made = fresh(made)
    assert combat_services.attack_damage_for(made).code.text == "mCM+2d10"
    combat_services.damage_apply(attack=made, access=gm(play))
    extension = extensions().get()
    assert (extension.entry["spec"], extension.entry["extra_damage_dice"]) == ("2d10", 2)
    # Without a browser seed the server makes one, and the entry says so.
    assert extension.entry["client_seed_source"] == "server"
    made = fresh(made)
    assert made.damage_applied == expected_damage(made, extension, "mCM+2d10").total
    assert made.damage_applied == 19 + sum(extension.entry["drawn"]) + 2


def test_the_most_extra_dice_with_the_longest_names_fit_the_logs_purpose(play, dice):
    for character in (play.ines, play.npc):
        character.name = "n" * 80
        character.save(update_fields=["name"])
    combat = start(play)
    dice.append([9, 3, 7])
    weapon = play.ines.weapons.create(name="w" * 80, damage_code="mCM+97d10", melee=True)
    made = combat_services.attack_make(
        combat=combat,
        access=gm(play),
        attacker=combatant(combat, play.ines),
        target=combatant(combat, play.npc),
        weapon=weapon,
    )
    combat_services.damage_apply(attack=made, access=gm(play), client_seed=client_seed())
    extension = extensions().get()
    assert len(extension.entry["dice"]) == 100
    # Exactly the log's limit: the purpose is never refused as too long.
    assert extension.purpose == f"{made.table_roll.latest.purpose}: los dados adicionales del daño mCM+97d10"
    assert len(extension.purpose) == roll_services.PURPOSE_MAX_LENGTH
    assert fresh(made).damage_applied == 19 + sum(extension.entry["drawn"]) + 2


def test_a_critical_multiplies_the_extra_dice_too(play, dice):
    play.npc.hitos.reflejos = 10  # Defensa 19: only the critical hits
    play.npc.hitos.save()
    combat = start(play)
    dice.append([10, 4, 10])
    made = attack_with(play, combat, "mCM+1d10")
    combat_services.damage_apply(attack=made, access=gm(play), client_seed=client_seed())
    drawn = extensions().get().entry["drawn"][0]
    # H47 — ×2 the weapon dice (K4 default), the extra die included, then the bonus.
    assert fresh(made).damage_applied == (24 + drawn) * 2 + 2


def test_the_npcs_usual_attack_may_be_above_mcm(play, dice):
    HitosSheet.objects.filter(character=play.npc).update(damage_code="mCM+1d10")
    play.npc.refresh_from_db()
    combat = start(play)
    dice.append([9, 9, 8])
    made = combat_services.attack_make(
        combat=combat,
        access=gm(play),
        attacker=combatant(combat, play.npc),
        target=combatant(combat, play.tomas),
        weapon=combat_services.NPC_ATTACK,
    )
    assert made.damage_code == "mCM+1d10"
    combat_services.damage_apply(attack=made, access=gm(play), client_seed=client_seed())
    assert extensions().get().entry["spec"] == "1d10"


def test_a_retried_form_with_the_same_seed_applies_the_damage_once(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack_with(play, combat, "mCM+1d10")
    seed = client_seed()
    first = combat_services.damage_apply(attack=made, access=gm(play), client_seed=seed)
    again = combat_services.damage_apply(attack=made, access=gm(play), client_seed=seed)
    assert again.damage_applied == first.damage_applied
    assert extensions().count() == 1
    assert SheetEvent.objects.filter(character=play.npc, kind=HitosEvent.DAMAGE).count() == 1
    # Another seed is another request: the damage is already applied.
    with pytest.raises(ValidationError, match="ya está aplicado"):
        combat_services.damage_apply(attack=made, access=gm(play), client_seed=client_seed())
    # A seed that made another roll is not this one's retry.
    other = roll_services.roll_append(
        campaign=play.campaign, user=play.gm, spec="1d6", purpose="Otra", read=plain_read, client_seed=client_seed()
    )
    second = attack_with(play, combat, "mCM+1d10")
    with pytest.raises(ValidationError, match="Esa semilla ya se usó"):
        combat_services.damage_apply(attack=second, access=gm(play), client_seed=other.client_seed)
    assert fresh(second).damage_applied is None


def test_an_extended_attack_roll_is_no_longer_rerolled(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack_with(play, combat, "mCM+1d10")
    combat_services.damage_apply(attack=made, access=gm(play), client_seed=client_seed())
    extension = extensions().get()
    with pytest.raises(ValidationError, match="ya está resuelto"):
        table_reroll(lock_table_roll(made.table_roll), user=play.ana, positions=[0], reading=hitos.Reading.POSITIVE)
    # The log refuses a re-roll of the extended version whatever the caller (no rollog vector yet).
    with pytest.raises(ValidationError) as refused:
        roll_services.reroll_append(parent=extension, user=play.ana, positions=[0], purpose="x", read=plain_read)
    assert refused.value.code == "parent_not_roll"


# --- the page ---------------------------------------------------------------------------------


def test_the_gm_applies_the_damage_from_the_page_and_the_card_shows_the_extension(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack_with(play, combat, "mCM+1d10")
    client = client_for(play.gm)
    html = client.get(url(play, "combat")).content.decode()
    assert "Daño mCM+1d10: los 1d10 adicionales se tiran al aplicar el daño; bonificación +2, RD −0." in html
    assert "Tirar 1d10 y aplicar el daño" in html
    # The browser's seed, and what its receipt says the seed draws.
    assert 'name="client_seed" value="" data-client-seed="true"' in html
    assert 'data-receipt-spec="1d10"' in html
    seed = client_seed()
    response = client.post(url(play, "combat-damage-apply", made.pk), {"client_seed": seed}, **HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="combat-attacks"')
    extension = extensions().get()
    assert extension.entry["client_seed"] == seed
    drawn = extension.entry["drawn"][0]
    applied = fresh(made).damage_applied
    assert applied == 19 + drawn + 2
    assert f"Daño mCM+1d10: {19 + drawn}, bonificación +2, RD −0 = <strong>{applied}</strong>" in html
    assert (
        f"Dados adicionales (1d10): {drawn}, añadidos a la tirada como extensión #{extension.seq} del registro." in html
    )
    assert f'href="{extension.get_absolute_url()}"' in html
    assert f"Daño aplicado: {applied}" in html
    # The same form sent again (same seed) shows what the first did, without an error.
    response = client.post(url(play, "combat-damage-apply", made.pk), {"client_seed": seed}, **HTMX)
    html = response.content.decode()
    assert "alert-danger" not in html and f"Daño aplicado: {applied}" in html
    assert extensions().count() == 1
    assert SheetEvent.objects.filter(character=play.npc, kind=HitosEvent.DAMAGE).count() == 1
    # The full page, for a player too.
    for who in (play.gm, play.ana, None):
        page = client_for(who).get(url(play, "combat")).content.decode()
        assert f"extensión #{extension.seq} del registro" in page
        assert f'href="{extension.get_absolute_url()}"' in page
        assert "y aplicar el daño" not in page
        # Nothing on the page draws dice any more: no browser seed is offered.
        assert 'name="client_seed"' not in page.split('id="combat-attacks"')[1]


def test_only_an_application_that_draws_dice_carries_a_browser_seed(play, dice):
    play.npc.hitos.rd = 5  # M 9 + 2 − 5 = 6, below Aguante 7: no mass-damage test (H52)
    play.npc.hitos.save()
    combat = start(play)
    dice.extend([[9, 3, 7], [9, 3, 7]])
    plain = attack_with(play, combat, "M")
    above = attack_with(play, combat, "mCM+1d10")
    html = client_for(play.gm).get(url(play, "combat")).content.decode()
    rows = {a.pk: html.split(f'id="attack-{a.pk}"')[1].split("</article>")[0] for a in (plain, above)}
    # A seed that draws nothing would leave a receipt for a roll that never appears.
    assert "Aplicar daño" in rows[plain.pk] and 'name="client_seed"' not in rows[plain.pk]
    assert "Tirar 1d10 y aplicar el daño" in rows[above.pk] and 'name="client_seed"' in rows[above.pk]


def test_without_javascript_the_server_seeds_the_extra_dice_and_redirects(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack_with(play, combat, "mCM+1d10")
    response = client_for(play.gm).post(url(play, "combat-damage-apply", made.pk))
    assert response.status_code == 302 and response["Location"] == url(play, "combat")
    extension = extensions().get()
    assert extension.entry["client_seed_source"] == "server"
    assert fresh(made).damage_applied == 19 + extension.entry["drawn"][0] + 2


def test_a_malformed_seed_is_refused_in_spanish_and_nothing_is_drawn(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack_with(play, combat, "mCM+1d10")
    response = client_for(play.gm).post(url(play, "combat-damage-apply", made.pk), {"client_seed": "¡no!"}, **HTMX)
    assert 'class="alert alert-danger"' in response.content.decode()
    assert not extensions().exists() and fresh(made).damage_applied is None


def test_players_cannot_draw_the_extra_dice(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack_with(play, combat, "mCM+1d10")
    for who in (play.ana, play.reader):
        assert client_for(who).post(url(play, "combat-damage-apply", made.pk), **HTMX).status_code == 403
    assert client_for(play.outsider).post(url(play, "combat-damage-apply", made.pk)).status_code in (403, 404)
    assert not extensions().exists()


def test_the_extension_verifies_offline_and_its_permalink_and_the_roll_log_show_it(play):
    combat = start(play)
    made = None
    # Real dice (a faked draw would not verify): attack until one hits.
    for _ in range(30):
        candidate = attack_with(play, combat, "mCM+1d10")
        if combat_services.attack_hits(fresh(candidate)):
            made = candidate
            break
    assert made is not None
    combat_services.damage_apply(attack=made, access=gm(play), client_seed=client_seed())
    extension = extensions().get()
    permalink = extension.permalink
    bundle = client_for(play.ana).get(reverse("rolls:roll-json", args=[permalink])).json()
    proof = verify_bundle(bundle, parse_public_key(settings.ROLLOG_KEYS.public_key_hex))
    assert proof.content.entry["kind"] == "extend"
    assert proof.content.entry["dice"] == [*proof.parent.entry["dice"], *extension.entry["drawn"]]
    assert proof.parent.entry["seq"] == made.table_roll.latest.seq
    page = client_for(play.ana).get(extension.get_absolute_url())
    assert page.status_code == 200
    html = page.content.decode()
    assert "mCM+1d10" in html
    log = client_for(play.ana).get(reverse("rolls:roll-log", args=[play.campaign.slug])).content.decode()
    assert extension.get_absolute_url() in log


def test_the_page_costs_the_same_queries_however_many_attacks_were_extended(play, dice, django_assert_max_num_queries):
    combat = start(play)
    dice.append([9, 3, 7])
    first = attack_with(play, combat, "mCM+1d10")
    combat_services.damage_apply(attack=first, access=gm(play), client_seed=client_seed())
    client = client_for(play.gm)
    client.get(url(play, "combat"))
    cache.clear()
    with django_assert_max_num_queries(30) as small:
        client.get(url(play, "combat"))
    ana = campaign_access(play.ana, play.campaign)
    for _ in range(3):
        dice.append([9, 3, 7])
        later = attack_with(play, combat, "mCM+2d10", target=play.tomas)
        combat_services.damage_apply(attack=later, access=gm(play), client_seed=client_seed())
        dice.append([8, 8, 9])
        attack_with(play, combat, "mCM+1d10")  # pending: its die not drawn yet
        # Pending too: above mCM by an aspect (H46).
        dice.append([8, 8, 9])
        shifted = attack_with(play, combat, "mCM", user=play.ana)
        combat_services.attack_shift(attack=shifted, access=ana, steps=1, aspect="Ágil como una gata")
    cache.clear()
    with django_assert_max_num_queries(len(small.captured_queries)):
        html = client.get(url(play, "combat")).content.decode()
    assert html.count("del registro.") == 4
    assert html.count("Tirar 2d10 y aplicar el daño") == 0
    assert html.count("Tirar 1d10 y aplicar el daño") == 6
