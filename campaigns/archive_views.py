"""The pages that make a new campaign from an archive (``campaigns.archive``),
linked from the new-campaign page: ``partidas/importar/``
(``campaigns:campaign-import``) takes the file, and
``partidas/importar/<id>/`` (``campaigns:campaign-import-review``) shows
what it holds and what it proves before the importer chooses. Anyone signed
in may import: the new campaign is theirs, and nobody else is made a member;
only the archive's GM, proven by this site's signature, re-creates it to play
on (anyone else gets a private, read-only copy).
"""

from __future__ import annotations

from typing import Any

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from campaigns import archive
from campaigns.models import ArchiveUpload, Visibility
from hitos_site.htmx import HtmxHttpRequest


class ArchiveUploadForm(forms.Form):
    file = forms.FileField(
        label=gettext_lazy("Archivo de la partida (JSON)"),
        help_text=gettext_lazy("El que da «Descargar (JSON)» en la página de una partida."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Ver qué contiene")))

    def clean_file(self) -> bytes:
        """The file's bytes, once they read as an archive."""
        upload = self.cleaned_data["file"]
        if upload.size > archive.MAX_BYTES:
            raise forms.ValidationError(
                _("El archivo ocupa más de %(mb)s MB: es demasiado grande para importarlo.")
                % {"mb": archive.MAX_BYTES // 2**20}
            )
        raw = upload.read()
        try:
            archive.archive_read(raw)
        except archive.ArchiveError as exc:
            raise forms.ValidationError(exc.problems) from None
        return raw


class ImportChoiceForm(forms.Form):
    """How to import a read archive: its visibility (only for the proven GM,
    never more public than the archived campaign) and which foreign roll
    keys to trust."""

    visibility = forms.ChoiceField(
        label=gettext_lazy("Visibilidad de la partida nueva"),
        widget=forms.RadioSelect,
        initial=Visibility.PRIVATE,
        error_messages={"invalid_choice": gettext_lazy("Elige una de las visibilidades de la lista.")},
    )
    trusted_keys = forms.MultipleChoiceField(
        label=gettext_lazy("Claves de tiradas en las que confías"),
        help_text=gettext_lazy(
            "Marca solo la clave de un sitio cuya huella hayas comprobado: sus tiradas se mostrarán como "
            "verificables con una clave de confianza."
        ),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        error_messages={"invalid_choice": gettext_lazy("Elige claves de la lista.")},
    )

    def __init__(self, *args, trust: archive.Trust, data_public: bool, foreign_keys, **kwargs):
        super().__init__(*args, **kwargs)
        if trust.gm:
            choices = Visibility.choices if data_public else [(Visibility.PRIVATE, Visibility.PRIVATE.label)]
            self.fields["visibility"].choices = choices
        else:
            del self.fields["visibility"]
        if foreign_keys:
            self.fields["trusted_keys"].choices = [
                (key, _("Huella %(fingerprint)s") % {"fingerprint": fingerprint}) for key, fingerprint in foreign_keys
            ]
        else:
            del self.fields["trusted_keys"]
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Importar como partida nueva")))


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_import(request: HtmxHttpRequest) -> HttpResponse:
    """Upload an archive; a readable one is kept for its review
    (Post/Redirect/Get to it), replacing the user's earlier uploads."""
    posted = request.method == "POST"
    form = ArchiveUploadForm(request.POST if posted else None, request.FILES if posted else None)
    if posted and form.is_valid():
        with transaction.atomic():
            ArchiveUpload.objects.filter(owner=request.user).delete()
            upload = ArchiveUpload.objects.create(owner=request.user, raw=form.cleaned_data["file"])
        return redirect("campaigns:campaign-import-review", upload_id=upload.pk)
    return render(request, "campaigns/campaign_import.html", {"form": form})


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_import_review(request: HtmxHttpRequest, upload_id: int) -> HttpResponse:
    """What the uploaded archive holds and proves; the importer chooses and
    imports (Post/Redirect/Get to the new campaign, with what it could not
    keep). Someone else's upload is a 404."""
    upload = get_object_or_404(ArchiveUpload, pk=upload_id, owner=request.user)
    try:
        data = archive.archive_read(bytes(upload.raw))
    except archive.ArchiveError as exc:
        # Read when it was uploaded; this site changed since (a game it no longer has).
        upload.delete()
        messages.error(request, " ".join(exc.problems))
        return redirect("campaigns:campaign-import")
    trust = archive.archive_trust(data, request.user)
    foreign_keys = archive.archive_foreign_keys(data)
    form = ImportChoiceForm(
        request.POST if request.method == "POST" else None,
        trust=trust,
        data_public=data["campaign"]["visibility"] == Visibility.PUBLIC,
        foreign_keys=foreign_keys,
    )
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                imported = archive.campaign_import(
                    data=data,
                    gm=request.user,
                    visibility=form.cleaned_data.get("visibility"),
                    trusted_keys=form.cleaned_data.get("trusted_keys", []),
                )
                upload.delete()
        except archive.ArchiveError as exc:
            for problem in exc.problems:
                form.add_error(None, problem)
        else:
            messages.success(request, " ".join([_("Partida importada."), *imported.notes]))
            return redirect(imported.campaign)
    context: dict[str, Any] = {
        "form": form,
        "campaign": data["campaign"],
        "summary": archive.archive_summary(data),
        "trust_lines": archive.trust_lines(trust, data),
        "foreign_keys": foreign_keys,
    }
    return render(request, "campaigns/campaign_import_review.html", context)
