"""The page that makes a new campaign from an archive (``campaigns.archive``),
at ``partidas/importar/`` (``campaigns:campaign-import``), linked from the
new-campaign page. Anyone signed in may import: the new campaign is theirs
to direct, and nobody else is made a member.
"""

from __future__ import annotations

from typing import Any

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from campaigns import archive
from hitos_site.htmx import HtmxHttpRequest


class ArchiveUploadForm(forms.Form):
    file = forms.FileField(
        label=gettext_lazy("Archivo de la partida (JSON)"),
        help_text=gettext_lazy("El que da «Descargar (JSON)» en la página de una partida."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Importar como partida nueva")))

    def clean_file(self) -> dict[str, Any]:
        upload = self.cleaned_data["file"]
        if upload.size > archive.MAX_BYTES:
            raise forms.ValidationError(
                _("El archivo ocupa más de %(mb)s MB: es demasiado grande para importarlo.")
                % {"mb": archive.MAX_BYTES // 2**20}
            )
        try:
            return archive.archive_read(upload.read())
        except archive.ArchiveError as exc:
            raise forms.ValidationError(exc.problems) from None


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_import(request: HtmxHttpRequest) -> HttpResponse:
    """Upload an archive; a valid one becomes a new campaign directed by the
    user (Post/Redirect/Get to it, with what the import could not keep)."""
    posted = request.method == "POST"
    form = ArchiveUploadForm(request.POST if posted else None, request.FILES if posted else None)
    if posted and form.is_valid():
        try:
            imported = archive.campaign_import(data=form.cleaned_data["file"], gm=request.user)
        except archive.ArchiveError as exc:
            form.add_error("file", exc.problems)
        else:
            messages.success(request, " ".join([_("Partida importada."), *imported.notes]))
            return redirect(imported.campaign)
    return render(request, "campaigns/campaign_import.html", {"form": form})
