"""Competitions (A13) and cooperations (A19) set up by the GM in a scene and
resolved once, when every participant's roll is final.

S004: «cada personaje realiza su tirada por separado y el que obtiene éxito
y tiene más éxitos chachis gana la competición. A empate de éxitos chachis,
gana el que tenga más éxitos normales. Si el empate continúa, entonces la
competición también está empatada»; «aumenta en +1 la dificultad de la
acción por cada personaje extra que se apunte a ayudar» and «combina los
éxitos que obtengan todos (¡y los éxitos chachis!)».
"""

from __future__ import annotations

import threading

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, connections

from campaigns.permissions import campaign_access
from rolls import rollog
from rules.aventuras import Tally
from systems.aventuras.contests import services
from systems.aventuras.contests.services import Side
from systems.aventuras.models import AventurasContest, AventurasContestant
from systems.aventuras.rolls import services as rolls
from table.models import TableRoll
from tests.factories import CampaignFactory, UserFactory
from tests.systems.aventuras.conftest import aventuras_character


def queue_d6(monkeypatch) -> list[list[int]]:
    """Queue the d6 pools the log draws next (``d6.append([6, 1])``); with
    the queue empty the log draws as usual."""
    queue: list[list[int]] = []
    real = rollog.dice_for_spec
    drawn: dict = {}

    def draw(seed, message, spec):
        key = (seed, message)
        if key not in drawn:
            if spec.endswith("d6") and queue:
                drawn[key] = list(queue.pop(0))
                assert len(drawn[key]) == int(spec[:-2]), f"{spec} rolled, {drawn[key]} queued"
            else:
                drawn[key] = real(seed, message, spec)
        return list(drawn[key])

    monkeypatch.setattr(rollog, "dice_for_spec", draw)
    return queue


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


def gm_access(world):
    return campaign_access(world.gm, world.campaign)


def access_of(world, who):
    return campaign_access(getattr(world, who), world.campaign)


def competition(world, *sides, title="La carrera tras el caballo"):
    return services.contest_create(
        scene=world.scene,
        access=gm_access(world),
        kind=AventurasContest.Kind.COMPETITION,
        title=title,
        sides=[Side(*s) for s in sides],
    )


def cooperation(world, *sides, difficulty=1, title="Buscar el avión de papel"):
    return services.contest_create(
        scene=world.scene,
        access=gm_access(world),
        kind=AventurasContest.Kind.COOPERATION,
        title=title,
        difficulty=difficulty,
        sides=[Side(character, attribute) for character, attribute in sides],
    )


def side_of(contest, character) -> AventurasContestant:
    return AventurasContestant.objects.select_related("contest__campaign", "contest__scene", "character").get(
        contest=contest, character=character
    )


def roll_side(world, contest, character, who):
    return services.contest_roll(contestant=side_of(contest, character), access=access_of(world, who))


# --- A13: the winner, pure -----------------------------------------------------------------


class _Row:
    def __init__(self, character_id, name, difficulty=0):
        self.character_id = character_id
        self.difficulty = difficulty
        self.character = type("C", (), {"name": name})()


def _competition_result(*sides):
    contest = AventurasContest(kind=AventurasContest.Kind.COMPETITION)
    return services.contest_result(
        contest, [(_Row(i, f"c{i}", difficulty), tally) for i, (tally, difficulty) in enumerate(sides)]
    )


def test_a13_more_chachis_among_those_who_succeed_wins():
    result = _competition_result((Tally(normals=0, chachis=2), 0), (Tally(normals=3, chachis=1), 0))
    assert result["winners"] == [0]
    assert result["decided_by"] == "chachis"


def test_a13_same_chachis_more_normals_wins():
    result = _competition_result((Tally(normals=1, chachis=1), 0), (Tally(normals=2, chachis=1), 0))
    assert result["winners"] == [1]
    assert result["decided_by"] == "normals"


def test_a13_same_chachis_and_normals_is_a_tie():
    result = _competition_result((Tally(normals=2, chachis=1), 0), (Tally(normals=2, chachis=1), 0))
    assert result["winners"] == [0, 1]
    assert result["decided_by"] == "tie"


def test_a13_nobody_succeeds_no_winner():
    result = _competition_result((Tally(normals=1), 1), (Tally(), 0))
    assert result["winners"] == []
    assert result["decided_by"] == "nobody"


def test_a13_each_side_its_own_difficulty_and_counted_after_it():
    # Side 0 has more chachis rolled but its difficulty 3 cancels the
    # normals and one chachi (A9); side 1, at 0, keeps its chachi and wins.
    result = _competition_result((Tally(normals=2, chachis=2), 3), (Tally(normals=0, chachis=1), 0))
    assert result["sides"][0]["remaining"] == {"normals": 0, "chachis": 1, "successes": 1}
    # Left after the difficulty: side 0 one chachi, side 1 one chachi: a tie.
    assert result["winners"] == [0, 1]
    assert result["decided_by"] == "tie"


def test_a13_the_only_side_that_succeeds_wins():
    result = _competition_result((Tally(normals=1), 2), (Tally(normals=1), 0))
    assert result["winners"] == [1]
    assert result["decided_by"] == "only"


def test_a19_cooperation_pools_and_raises_the_difficulty():
    contest = AventurasContest(kind=AventurasContest.Kind.COOPERATION, difficulty=1)
    rows = [(_Row(1, "a"), Tally(normals=1)), (_Row(2, "b"), Tally(normals=1, chachis=1)), (_Row(3, "c"), Tally())]
    result = services.contest_result(contest, rows)
    # Two extra helpers: 1 + 2 = 3; pooled 3 successes do not beat 3 (A8).
    assert result["difficulty"] == 3
    assert result["pooled"] == {"normals": 2, "chachis": 1, "successes": 3}
    assert result["succeeded"] is False
    result = services.contest_result(contest, rows[:2])
    assert result["difficulty"] == 2
    assert result["succeeded"] is True
    # A9 — the difficulty cancels the normals first: the chachi is left.
    assert result["remaining"] == {"normals": 0, "chachis": 1, "successes": 1}
    assert result["chachis"] == 1


# --- set up, roll, resolve ------------------------------------------------------------------


def test_the_seed_race_palomita_against_cacahuete(aventuras_world, d6):
    # S004: Palomita corre (Cachas, 3 dados), el Profesor Cacahuete cabalga
    # (Espabilado, 3 dados); Palomita saca más y gana la competición.
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    d6.extend([[6, 4, 1], [5, 4, 2]])
    mine = roll_side(world, contest, world.pc, "player")
    assert not rolls.is_final(mine)  # a chachi to decide: not resolved yet
    theirs = roll_side(world, contest, world.npc, "gm")
    assert rolls.is_final(theirs)  # a GM character with no 6: final at once
    contest.refresh_from_db()
    assert contest.resolved_at is None
    rolls.settle(mine, by=world.player)
    contest.refresh_from_db()
    assert contest.resolved_at is not None
    assert contest.result["winners"] == [world.pc.pk]
    assert contest.result["decided_by"] == "chachis"
    first = contest.resolved_at
    # Settling again changes nothing: resolved once.
    services.resolve_if_ready(contest.pk)
    contest.refresh_from_db()
    assert contest.resolved_at == first


def test_the_result_reads_the_signed_dice(aventuras_world, d6):
    world = aventuras_world
    contest = competition(world, (world.other_pc, "espabilado"), (world.npc, "espabilado"))
    d6.extend([[5, 5, 1, 2], [4, 4, 4]])
    tarta = roll_side(world, contest, world.other_pc, "other")
    roll_side(world, contest, world.npc, "gm")
    rolls.settle(tarta, by=world.other)
    contest.refresh_from_db()
    # Two normals against three normals: Cacahuete wins on normals.
    assert contest.result["winners"] == [world.npc.pk]
    assert contest.result["decided_by"] == "normals"
    assert TableRoll.objects.get(pk=tarta.pk).latest.signed_game["normals"] == 2


def test_a19_cooperation_resolved_with_the_pool(aventuras_world, d6):
    # S004: Palomita y el Profesor Cacahuete buscan juntos, cada uno con su Espabilado.
    world = aventuras_world
    contest = cooperation(world, (world.pc, "espabilado"), (world.npc, "espabilado"), difficulty=1)
    d6.extend([[4, 2], [5, 1, 3]])
    roll_side(world, contest, world.pc, "player")
    roll_side(world, contest, world.npc, "gm")
    contest.refresh_from_db()
    assert contest.resolved_at is None  # a hero re-roll is still possible for Palomita
    rolls.settle(side_of(contest, world.pc).roll, by=world.player)
    contest.refresh_from_db()
    assert contest.result["difficulty"] == 2
    assert contest.result["pooled"]["successes"] == 2
    assert contest.result["succeeded"] is False


def test_rolling_twice_for_one_side_is_refused(aventuras_world, d6):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    d6.extend([[1, 2, 3]])
    roll_side(world, contest, world.pc, "player")
    count = TableRoll.objects.count()
    with pytest.raises(ValidationError, match="ya ha tirado"):
        roll_side(world, contest, world.pc, "player")
    assert TableRoll.objects.count() == count


def test_only_the_controller_rolls_a_side(aventuras_world):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    with pytest.raises(PermissionDenied):
        roll_side(world, contest, world.pc, "other")
    with pytest.raises(PermissionDenied):
        roll_side(world, contest, world.npc, "player")
    # The GM rolls for the GM's characters, not for a player's hero.
    with pytest.raises(PermissionDenied):
        roll_side(world, contest, world.pc, "gm")
    assert not TableRoll.objects.exists()


def test_fewer_than_two_sides_is_refused(aventuras_world):
    world = aventuras_world
    with pytest.raises(ValidationError, match="al menos dos bandos"):
        competition(world, (world.pc, "cachas"))
    with pytest.raises(ValidationError, match="al menos dos personajes"):
        cooperation(world, (world.pc, "cachas"))
    with pytest.raises(ValidationError, match="una sola vez"):
        competition(world, (world.pc, "cachas"), (world.pc, "majo"))
    assert not AventurasContest.objects.exists()


def test_a_character_of_another_campaign_is_refused(aventuras_world):
    world = aventuras_world
    stranger = aventuras_character(CampaignFactory(system="aventuras"), UserFactory(), "Rey Hielo")
    with pytest.raises(ValidationError, match="no está en la partida"):
        competition(world, (world.pc, "cachas"), (stranger, "majo"))
    assert not AventurasContest.objects.exists()


def test_only_the_gm_sets_up_and_cancels(aventuras_world):
    world = aventuras_world
    with pytest.raises(PermissionDenied):
        services.contest_create(
            scene=world.scene,
            access=access_of(world, "player"),
            kind="competition",
            title="x",
            sides=[Side(world.pc, "cachas"), Side(world.npc, "majo")],
        )
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    with pytest.raises(PermissionDenied):
        services.contest_cancel(contest=contest, access=access_of(world, "player"), reason="Porque sí")
    services.contest_cancel(contest=contest, access=gm_access(world), reason="Se escapa el caballo")
    contest.refresh_from_db()
    assert contest.cancelled_at is not None
    with pytest.raises(ValidationError, match="anulado"):
        roll_side(world, contest, world.pc, "player")
    assert not TableRoll.objects.exists()


def test_a_resolved_contest_cannot_be_cancelled(aventuras_world, d6):
    world = aventuras_world
    contest = competition(world, (world.npc, "espabilado"), (world.other_pc, "cachas"))
    d6.extend([[1, 2, 3], [1, 2]])
    roll_side(world, contest, world.npc, "gm")
    other = roll_side(world, contest, world.other_pc, "other")
    rolls.settle(other, by=world.other)
    contest.refresh_from_db()
    assert contest.result["decided_by"] == "nobody"
    with pytest.raises(ValidationError, match="resuelta"):
        services.contest_cancel(contest=contest, access=gm_access(world), reason="Me he equivocado")


def test_cancelling_needs_a_reason_and_keeps_who_and_why(aventuras_world):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    for empty in ("", "   \n  "):
        with pytest.raises(ValidationError, match="Explica por qué se anula."):
            services.contest_cancel(contest=contest, access=gm_access(world), reason=empty)
    with pytest.raises(ValidationError, match="como mucho 300 caracteres"):
        services.contest_cancel(contest=contest, access=gm_access(world), reason="x" * 301)
    contest.refresh_from_db()
    assert (contest.cancelled_at, contest.cancelled_by, contest.cancel_reason) == (None, None, "")
    services.contest_cancel(contest=contest, access=gm_access(world), reason="  El caballo   se ha ido\n volando ")
    contest.refresh_from_db()
    assert contest.cancelled_at is not None
    assert (contest.cancelled_by, contest.cancel_reason) == (world.gm, "El caballo se ha ido volando")
    with pytest.raises(ValidationError, match="Ya estaba anulada."):
        services.contest_cancel(contest=contest, access=gm_access(world), reason="Otra vez")
    contest.refresh_from_db()
    assert contest.cancel_reason == "El caballo se ha ido volando"


def test_cancelling_gives_no_hero_point_back(aventuras_world, d6):
    # A22 — «gastar un punto de Héroe para añadir dos dados»: the roll happened
    # (it is in the log), so calling the contest off leaves the point spent.
    from campaigns.models import Post
    from rolls.models import RollEntry
    from tests.factories import make_post

    world = aventuras_world
    make_post(world.scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    d6.extend([[4, 1, 1, 2, 3]])
    mine = services.contest_roll(
        contestant=side_of(contest, world.pc), access=access_of(world, "player"), hero_point=True
    )
    world.pc.aventuras.refresh_from_db()
    assert world.pc.aventuras.hero_points == 4
    entries = RollEntry.objects.count()
    services.contest_cancel(contest=contest, access=gm_access(world), reason="Llueve")
    world.pc.aventuras.refresh_from_db()
    assert world.pc.aventuras.hero_points == 4
    assert RollEntry.objects.count() == entries and TableRoll.objects.filter(pk=mine.pk).exists()
    # Settling the roll afterwards resolves nothing: the contest stays called off.
    if not rolls.is_final(mine):
        rolls.settle(mine, by=world.player)
    contest.refresh_from_db()
    assert contest.resolved_at is None and contest.result == {}


# --- two participants settling at once (PostgreSQL) ------------------------------------------


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs PostgreSQL row locks (SQLite has one writer at a time)"
)
@pytest.mark.django_db(transaction=True)
def test_two_participants_settling_at_once_resolve_the_contest_once(aventuras_world, monkeypatch):
    world = aventuras_world
    resolved = []
    real = services.contest_result

    def counting(contest, rolled):
        resolved.append(contest.pk)
        return real(contest, rolled)

    monkeypatch.setattr(services, "contest_result", counting)
    d6 = queue_d6(monkeypatch)
    for attempt in range(8):
        contest = competition(world, (world.pc, "majo"), (world.other_pc, "espabilado"), title=f"Intento {attempt}")
        d6.extend([[6, 1, 1, 1], [6, 1, 1, 1]])
        first = roll_side(world, contest, world.pc, "player")
        second = roll_side(world, contest, world.other_pc, "other")
        assert not rolls.is_final(first) and not rolls.is_final(second)
        barrier = threading.Barrier(2)
        errors = []

        def settle(table_roll, user, barrier=barrier, errors=errors):
            try:
                barrier.wait(timeout=30)
                rolls.settle(TableRoll.objects.get(pk=table_roll.pk), by=user)
            except BaseException as exc:  # noqa: BLE001 - counted below
                errors.append(exc)
            finally:
                connections.close_all()

        threads = [
            threading.Thread(target=settle, args=(first, world.player)),
            threading.Thread(target=settle, args=(second, world.other)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not errors
        contest.refresh_from_db()
        assert contest.resolved_at is not None
        assert resolved.count(contest.pk) == 1
