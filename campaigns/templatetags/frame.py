"""``{% frame "name" value … %}…{% endframe %}``: a piece of the site's frame
(``base.html``: the head, the navigation bar, the footer) rendered once per
process for each language and set of ``value``s, then reused.

What it holds is the same for every request with those values: links, labels
and static addresses (fixed while the process runs: a new release starts new
processes, so it is kept in the process, never in the shared cache). Its forms
get the request's own CSRF token each time (``campaigns.fragments.with_csrf``).
Anything else that differs between requests belongs outside the block, or in
its values.
"""

from __future__ import annotations

from django import template
from django.core.signals import setting_changed
from django.utils.translation import get_language

from campaigns import fragments

register = template.Library()

# Rendered pieces by (name, language, values); emptied when full (the values
# include a signed-in user's name and unread count, so it must stay bounded).
_rendered: dict[tuple, str] = {}
MAX_PIECES = 1000


def _forget(**kwargs) -> None:
    _rendered.clear()


# Tests change settings (languages, URLs, static storage) the pieces depend on.
setting_changed.connect(_forget, dispatch_uid="campaigns.frame")


class FrameNode(template.Node):
    def __init__(self, name: str, values: list, nodelist: template.NodeList) -> None:
        self.name = name
        self.values = values
        self.nodelist = nodelist

    def render(self, context: template.Context) -> str:
        request = getattr(context, "request", None)
        if request is None:
            return self.nodelist.render(context)
        key = (self.name, get_language(), *(value.resolve(context) for value in self.values))
        html = _rendered.get(key)
        if html is None:
            with context.push(fragments.csrf_context()):
                html = self.nodelist.render(context)
            if len(_rendered) >= MAX_PIECES:
                _rendered.clear()
            _rendered[key] = html
        return fragments.with_csrf(request, html, token=context.get("csrf_token"))


@register.tag
def frame(parser, token) -> FrameNode:
    bits = token.split_contents()
    if len(bits) < 2 or bits[1][0] not in "\"'" or bits[1][0] != bits[1][-1]:
        raise template.TemplateSyntaxError(f"{bits[0]} needs a quoted name first")
    nodelist = parser.parse(("endframe",))
    parser.delete_first_token()
    return FrameNode(bits[1][1:-1], [parser.compile_filter(bit) for bit in bits[2:]], nodelist)
