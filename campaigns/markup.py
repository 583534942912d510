"""Markdown for user text, rendered once when it is saved.

markdown-it-py renders CommonMark with raw HTML turned off, then nh3 keeps a
short list of tags and no attributes but link targets, so no user text can
carry script, styles, classes or ids (nothing can imitate a roll card), and
links only go to http, https or mailto.
"""

import nh3
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).disable("image")

_TAGS = {
    "p",
    "br",
    "strong",
    "em",
    "del",
    "s",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "hr",
    "h3",
    "h4",
    "h5",
    "h6",
}
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


def _shift_headings(html: str) -> str:
    # A post's headings sit inside the page's own h1/h2 structure: every level
    # goes two down (h1 → h3 … h4 and deeper → h6), deepest first so that no
    # heading is shifted twice and their order is kept.
    for level in (6, 5, 4, 3, 2, 1):
        new = min(level + 2, 6)
        html = html.replace(f"<h{level}>", f"<h{new}>").replace(f"</h{level}>", f"</h{new}>")
    return html


def render_markdown(text: str) -> str:
    """Markdown source to sanitised HTML, ready to store and show as is."""
    if not text.strip():
        return ""
    html = _shift_headings(_md.render(text))
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="nofollow noopener noreferrer ugc",
        strip_comments=True,
    )
