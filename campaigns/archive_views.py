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
        """The file's bytes, once they read as an archive (``self.archive``)."""
        upload = self.cleaned_data["file"]
        if upload.size > archive.MAX_BYTES:
            raise forms.ValidationError(
                _("El archivo ocupa más de %(mb)s MB: es demasiado grande para importarlo.")
                % {"mb": archive.MAX_BYTES // 2**20}
            )
        raw = upload.read()
        try:
            self.archive = archive.archive_read(raw)
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
        label=gettext_lazy("Claves de tiradas en las que confía la dirección"),
        help_text=gettext_lazy(
            "Marca solo la clave de un sitio cuya huella hayas comprobado: sus tiradas se mostrarán como "
            "verificables con una clave en la que confía la dirección de la partida."
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
        if foreign_keys and trust.gm:
            # Only the proven GM speaks for the campaign's trust in a key.
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
    """Upload an archive; a readable one is kept for its review, read once
    here (Post/Redirect/Get to it), replacing the user's earlier uploads and
    everyone's expired ones."""
    posted = request.method == "POST"
    form = ArchiveUploadForm(request.POST if posted else None, request.FILES if posted else None)
    if posted and form.is_valid():
        upload = archive.upload_keep(request.user, form.cleaned_data["file"], form.archive)
        return redirect("campaigns:campaign-import-review", upload_id=upload.pk)
    return render(request, "campaigns/campaign_import.html", {"form": form})


def _choice_form(request: HtmxHttpRequest, review: dict[str, Any], trust: archive.Trust) -> ImportChoiceForm:
    return ImportChoiceForm(
        request.POST if request.method == "POST" else None,
        trust=trust,
        data_public=review["campaign"]["visibility"] == Visibility.PUBLIC,
        foreign_keys=review["foreign_keys"],
    )


def _already_imported(request: HtmxHttpRequest, upload: ArchiveUpload) -> HttpResponse:
    messages.info(request, _("Esta partida ya se importó: es esta."))
    return redirect(upload.campaign)


def _import(request: HtmxHttpRequest, upload_id: int, form: ImportChoiceForm) -> HttpResponse | None:
    """Import the upload under its row's lock, once: a second import of the
    same review goes to the campaign the first made. ``None`` when the
    archive is refused (its problems are added to ``form``)."""
    try:
        with transaction.atomic():
            upload = get_object_or_404(ArchiveUpload.objects.select_for_update(), pk=upload_id, owner=request.user)
            if upload.campaign_id is not None:
                return _already_imported(request, upload)
            imported = archive.campaign_import(
                data=archive.archive_read(bytes(upload.raw)),
                gm=request.user,
                visibility=form.cleaned_data.get("visibility"),
                trusted_keys=form.cleaned_data.get("trusted_keys", []),
            )
            upload.raw, upload.campaign = b"", imported.campaign
            upload.save(update_fields=["raw", "campaign"])
    except archive.ArchiveError as exc:
        for problem in exc.problems:
            form.add_error(None, problem)
        return None
    messages.success(request, " ".join([_("Partida importada."), *imported.notes]))
    return redirect(imported.campaign)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_import_review(request: HtmxHttpRequest, upload_id: int) -> HttpResponse:
    """What the uploaded archive holds and proves (as read at upload); the
    importer chooses and imports (Post/Redirect/Get to the new campaign,
    with what it could not keep). Someone else's upload, or an expired one,
    is a 404; an imported one sends to its campaign."""
    upload = get_object_or_404(
        ArchiveUpload.objects.defer("raw"), pk=upload_id, owner=request.user, created_at__gte=archive.upload_cutoff()
    )
    if upload.campaign_id is not None:
        return _already_imported(request, upload)
    review = upload.review
    if not review:
        # Uploaded before this site read an archive once at upload.
        upload.delete()
        messages.error(request, _("Vuelve a subir el archivo para ver qué contiene."))
        return redirect("campaigns:campaign-import")
    trust = archive.Trust.from_json(review["trust"])
    form = _choice_form(request, review, trust)
    if request.method == "POST" and form.is_valid():
        response = _import(request, upload.pk, form)
        if response is not None:
            return response
    context: dict[str, Any] = {
        "form": form,
        "campaign": review["campaign"],
        "summary": archive.archive_summary(review["counts"]),
        "trust_lines": archive.trust_lines(trust),
        "foreign_keys": review["foreign_keys"],
    }
    return render(request, "campaigns/campaign_import_review.html", context)
