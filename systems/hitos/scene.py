"""HITOS's part of the scene form: the situation aspects (H13), one per line,
that any player in the scene may activate (``campaigns.extensions.SceneFields``)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from accounts.limits import max_length_of, split_lines
from campaigns import versions
from campaigns.extensions import SceneFields
from systems.hitos.models import SceneAspect

SYSTEM = "hitos"
# The most situation aspects a scene has.
SCENE_ASPECTS_MAX = 20


class AspectLinesField(forms.CharField):
    """One aspect per line; cleaned to the list of phrases."""

    def __init__(self, **kwargs):
        super().__init__(
            label=_("Aspectos de situación"),
            required=False,
            widget=forms.Textarea(attrs={"rows": 3}),
            help_text=_("Uno por línea. Cualquier jugador de la escena puede activarlos."),
            **kwargs,
        )

    def clean(self, value) -> list[str]:
        phrases = split_lines(super().clean(value), max_length=max_length_of(SceneAspect, "phrase"))
        if len(phrases) > SCENE_ASPECTS_MAX:
            raise forms.ValidationError(
                _("Como mucho %(limit)d aspectos por escena."), params={"limit": SCENE_ASPECTS_MAX}
            )
        return phrases


def _fields(campaign) -> dict[str, forms.Field]:
    return {"aspects": AspectLinesField()} if campaign.system == SYSTEM else {}


def _initial(scene) -> dict[str, Any]:
    return {"aspects": "\n".join(a.phrase for a in scene.aspects.all())}


@transaction.atomic
def _save(scene, values: dict[str, Any]) -> None:
    if "aspects" not in values:
        return
    scene.aspects.all().delete()
    SceneAspect.objects.bulk_create(
        SceneAspect(scene=scene, phrase=phrase, position=i) for i, phrase in enumerate(values["aspects"])
    )
    # bulk_create sends no signal: the scene page shows its aspects under the scene's version.
    versions.scene_changed(scene.pk)


def _export(scene) -> dict[str, Any]:
    return {"aspects": [a.phrase for a in scene.aspects.all()]}


SCENE_FIELDS = SceneFields(fields=_fields, initial=_initial, save=_save, export=_export, prefetch=("aspects",))
