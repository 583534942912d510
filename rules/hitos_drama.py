"""HITOS drama point economy (H13, H22–H27, K6, K15, K17) and Degeneración (H59, H90–H94).

Drama points move as ``Transfer``s between parties: character ids, the GM's
pool (``GM_POOL``) and the ``BANK`` (where spent points go and gained points
come from). ``apply_transfers`` checks nobody goes below zero. Nothing here
stores anything: the sheets service applies the transfers in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from rules.hitos_options import DEFAULT_OPTIONS, HitosOptions

GM_POOL = "dj"
BANK = "banco"

MAX_DEGENERACION = 10


@dataclass(frozen=True, slots=True)
class Side:
    """A character taking part in an activation; NPCs have no Drama (H24)."""

    id: str
    npc: bool = False


class NotEnoughPoints(ValueError):
    """A transfer would leave ``account`` below zero (it has ``have``)."""

    def __init__(self, account: str, have: int):
        who = "El DJ" if account == GM_POOL else f"«{account}»"
        super().__init__(f"{who} no tiene puntos dramáticos suficientes ({have}).")
        self.account = account
        self.have = have


@dataclass(frozen=True, slots=True)
class Transfer:
    source: str
    target: str
    amount: int = 1
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DramaEffect:
    transfers: tuple[Transfer, ...] = ()
    exhausts_aspect: bool = False
    degeneracion: int = 0  # H92 — points of Degeneración the activator gains
    restores_aspect: bool = False  # K17 — a refused element gives back the aspect exhausted for it


def _account(side: Side, options: HitosOptions) -> str:
    # H24 / K6 — NPC points come from and go to the GM's pool; with S001's
    # option NPCs hold nothing, so their points come from and go to the bank.
    if side.npc:
        return GM_POOL if options.npc_drama == "gm_pool" else BANK
    return side.id


def _spend(side: Side, reason: str, options: HitosOptions) -> tuple[Transfer, ...]:
    account = _account(side, options)
    return () if account == BANK else (Transfer(account, BANK, 1, reason),)


def _gain(side: Side, reason: str, options: HitosOptions) -> tuple[Transfer, ...]:
    account = _account(side, options)
    return () if account == BANK else (Transfer(BANK, account, 1, reason),)


def _npc_payout(activator: Side, affected: Side | None, options: HitosOptions) -> tuple[Transfer, ...]:
    # K6 option (S001) — when an NPC activates an aspect the GM gives a drama
    # point to the player most affected by the NPC's action.
    if activator.npc and options.npc_drama == "affected_player" and affected and not affected.npc:
        return (Transfer(BANK, affected.id, 1, "el PNJ activa un aspecto"),)
    return ()


def _check_exhaustable(activator: Side, own_aspect: bool) -> None:
    # H27 — a player exhausts only their own character's aspects; NPCs and the
    # GM's pool exhaust nothing (they pay from the pool, H24).
    if not own_aspect or activator.npc or activator.id == GM_POOL:
        raise ValueError("Un jugador solo puede agotar los aspectos de su propio personaje.")


def positive_activation(
    activator: Side,
    *,
    exhaust: bool = False,
    own_aspect: bool = True,
    arcane: bool = False,
    gm_forces_degeneracion: bool = False,
    affected: Side | None = None,
    options: HitosOptions = DEFAULT_OPTIONS,
) -> DramaEffect:
    """H13/H14 — activating an aspect to re-roll costs 1 drama point or exhausts
    the aspect. H27 — only one's own aspects can be exhausted, and NPCs exhaust
    none of the player's. H92 — with an arcane skill the player may take +1
    Degeneración instead of the point; if the GM forces it, the player also gains
    a point."""
    if exhaust:
        _check_exhaustable(activator, own_aspect)
    if gm_forces_degeneracion and not arcane:
        raise ValueError("Solo se puede forzar Degeneración en una acción con habilidad arcana.")
    if exhaust:
        return DramaEffect(exhausts_aspect=True)
    if arcane and gm_forces_degeneracion:
        return DramaEffect(_gain(activator, "el DJ fuerza la Degeneración", options), degeneracion=1)
    return DramaEffect(_spend(activator, "activa un aspecto", options) + _npc_payout(activator, affected, options))


def arcane_degeneracion_instead(activator: Side) -> DramaEffect:
    """H92 — the player chooses +1 Degeneración instead of paying the point."""
    if activator.npc:
        raise ValueError("Los PNJ no tienen Degeneración que ganar en lugar de puntos dramáticos.")
    return DramaEffect(degeneracion=1)


def negative_activation(activator: Side, target: Side, options: HitosOptions = DEFAULT_OPTIONS) -> DramaEffect:
    """H18 — declaring a negative activation: the activator pays 1 point now.
    (With the S001 option an NPC pays nothing and the target's gain on accepting
    is the GM's payout, so it is not paid twice.)"""
    if activator.id == target.id:
        raise ValueError("No se puede activar un aspecto negativamente contra la propia tirada.")
    return DramaEffect(_spend(activator, "activa un aspecto en contra", options))


def negative_accepted(activator: Side, target: Side, options: HitosOptions = DEFAULT_OPTIONS) -> DramaEffect:
    """H22/H25 — the target accepts the re-roll and gains a point
    (net: activator −1, target +1)."""
    return DramaEffect(_gain(target, "acepta la activación", options))


def negative_cancelled(activator: Side, target: Side, options: HitosOptions = DEFAULT_OPTIONS) -> DramaEffect:
    """H22 — the target cancels by paying 1 of their points: the activator gets
    back their own point and receives the target's (net: activator +1,
    target −1). No re-roll is made."""
    source = _account(target, options)
    receiver = _account(activator, options)
    transfers = []
    if source != BANK:
        transfers.append(Transfer(source, BANK, 1, "cancela la activación"))
    if receiver != BANK:
        transfers.append(Transfer(BANK, receiver, 1, "recupera su punto"))
        transfers.append(Transfer(BANK, receiver, 1, "recibe el punto de quien cancela"))
    return DramaEffect(tuple(transfers))


def narrative_activation(
    activator: Side,
    options: HitosOptions = DEFAULT_OPTIONS,
    *,
    exhaust: bool = False,
    own_aspect: bool = True,
) -> DramaEffect:
    """H23 — introducing a narrative element costs 1 point. K17 — a player
    may instead exhaust their own character's aspect (the one activated), as
    with any activation of their own aspect (H13); H27 — never another
    character's, and NPCs or the GM's pool exhaust nothing."""
    if exhaust:
        _check_exhaustable(activator, own_aspect)
        return DramaEffect(exhausts_aspect=True)
    return DramaEffect(_spend(activator, "introduce un elemento narrativo", options))


def narrative_accepted(
    affected: Side, options: HitosOptions = DEFAULT_OPTIONS, *, exhausted: bool = False
) -> DramaEffect:
    """H23 — a harmed character gains the point the activator spent.

    K17 — when the element was paid by exhausting an aspect no point was
    spent, so there is none to gain: accepting moves nothing (net: activator
    the exhausted aspect, affected 0)."""
    if exhausted:
        return DramaEffect()
    return DramaEffect(_gain(affected, "acepta el elemento narrativo", options))


def narrative_refused(
    activator: Side, affected: Side, options: HitosOptions = DEFAULT_OPTIONS, *, exhausted: bool = False
) -> DramaEffect:
    """H23, K15 (literal reading) — the point the activator spent would go to
    the affected character, who refuses by paying it back: the activator
    recovers the point and nothing else moves (net 0 for both). It is not
    settled like a cancelled negative activation: H22's extra point is H22's
    alone.

    K17 — when the element was paid by exhausting an aspect, the same net 0:
    the refusal costs the affected nothing, no point moves, and the activator
    gets the exhausted aspect back (``restores_aspect``); the element does not
    happen."""
    if exhausted:
        return DramaEffect(restores_aspect=True)
    return DramaEffect(_gain(activator, "recupera su punto: el elemento narrativo se rechaza", options))


def complication_compensation(character: Side, options: HitosOptions = DEFAULT_OPTIONS) -> DramaEffect:
    """H26 — a complication that causes a real setback earns 1 point."""
    return DramaEffect(_gain(character, "complicación", options))


def session_refresh(drama: int) -> int:
    """H26 — each session starts with as many drama points as the Drama score."""
    if drama.__class__ is not int or drama < 0:
        raise ValueError(f"El Drama debe ser un número entero no negativo, no {drama!r}.")
    return drama


def apply_transfers(balances: Mapping[str, int], transfers: Iterable[Transfer]) -> dict[str, int]:
    """New balances after the transfers, in order. The bank is unlimited and not
    listed; anyone else going below zero raises ``NotEnoughPoints`` and nothing
    is applied."""
    result = dict(balances)
    for t in transfers:
        if t.amount.__class__ is not int or t.amount < 1:
            raise ValueError(f"Una transferencia de puntos dramáticos debe ser positiva, no {t.amount!r}.")
        if t.source != BANK:
            have = result.get(t.source, 0)
            if have < t.amount:
                raise NotEnoughPoints(t.source, have)
            result[t.source] = have - t.amount
        if t.target != BANK:
            result[t.target] = result.get(t.target, 0) + t.amount
    return result


class DegeneracionTrigger(StrEnum):
    # H91 (a) — Ocultismo + arcane skills reach a multiple of 5.
    ARCANE_KNOWLEDGE = "conocimiento_arcano"
    # H92 (b) — +1 instead of a drama point on an arcane activation.
    ARCANE_ACTIVATION = "activacion_arcana"
    # H93 (c) — all Estabilidad Mental lost to Mythos terror.
    MIND_LOST = "estabilidad_perdida"
    # H93 (d) — all Resistencia lost to direct supernatural damage.
    BODY_LOST = "resistencia_perdida"
    # H93 (e) — Enloquecido through Mythos horrors.
    ENLOQUECIDO = "enloquecido"
    # H59 / H93 (f) — Moribundo from supernatural causes.
    MORIBUNDO = "moribundo"


def degeneracion_gain(events: Iterable[Iterable[DegeneracionTrigger | str]]) -> int:
    """K12 / Q14 — +1 per triggering event, however many clauses it meets: one
    horror that empties the meter (c) and drives the character mad (e) counts once.
    Each event is the set of triggers it meets."""
    gain = 0
    for event in events:
        triggers = {DegeneracionTrigger(t) for t in event}
        gain += 1 if triggers else 0
    return gain


def arcane_knowledge_triggers(before: int, after: int) -> int:
    """H91 — how many multiples of 5 the sum of Ocultismo and arcane skills
    reaches when it goes from ``before`` to ``after``."""
    if before < 0 or after < 0:
        raise ValueError("La suma de habilidades arcanas no puede ser negativa.")
    if after <= before:
        return 0
    return after // 5 - before // 5


@dataclass(frozen=True, slots=True)
class DegeneracionChange:
    before: int
    after: int
    becomes_npc: bool  # H94 — at 10 the character is a GM-controlled creature


def add_degeneracion(current: int, gain: int) -> DegeneracionChange:
    """H90 — Degeneración only goes up, to at most 10 (H94)."""
    if current.__class__ is not int or not 0 <= current <= MAX_DEGENERACION:
        raise ValueError(f"La Degeneración debe estar entre 0 y 10, no {current!r}.")
    if gain.__class__ is not int or gain < 0:
        raise ValueError(f"La Degeneración nunca disminuye: no se puede sumar {gain!r}.")
    after = min(MAX_DEGENERACION, current + gain)
    return DegeneracionChange(current, after, after == MAX_DEGENERACION)


# S001 «Interpretar los puntos de degeneración» — what each level 0–10 means,
# by a stable id per level (the site shows S001's words for it, translated).
DEGENERACION_LEVELS: tuple[str, ...] = (
    "human",  # 0 — completely human
    "minor_change",  # 1 — a minor change, easily overlooked
    "noticed_change",  # 2 — the character notices it is not normal
    "second_change",  # 3 — a second change begins
    "hard_to_hide",  # 4 — both changes are hard to hide
    "evident",  # 5 — the changes are evident; traits should change
    "inhuman",  # 6 — most humanity lost, body and mind
    "human_exception",  # 7 — the human part is the exception
    "aberrant",  # 8 — two or three human traits at most
    "abominable",  # 9 — a minimal link with the human
    "mythos_creature",  # 10 — a creature of the Mythos, now an NPC (H94)
)


def degeneracion_level(level: int) -> str:
    """The id of what Degeneración ``level`` means (S001), for the site to word."""
    if level.__class__ is not int or not 0 <= level <= MAX_DEGENERACION:
        raise ValueError(f"La Degeneración debe estar entre 0 y 10, no {level!r}.")
    return DEGENERACION_LEVELS[level]
