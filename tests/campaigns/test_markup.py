"""campaigns.markup: Markdown to sanitised HTML, rendered once when text is saved."""

import pytest

from campaigns.markup import render_markdown

REL = 'rel="nofollow noopener noreferrer ugc"'


@pytest.mark.parametrize(
    ("source", "html"),
    [
        ("**negrita** y *cursiva*", "<p><strong>negrita</strong> y <em>cursiva</em></p>\n"),
        (
            "> cita\n>> anidada",
            "<blockquote>\n<p>cita</p>\n<blockquote>\n<p>anidada</p>\n</blockquote>\n</blockquote>\n",
        ),
        ("3. tres\n4. cuatro", '<ol start="3">\n<li>tres</li>\n<li>cuatro</li>\n</ol>\n'),
        ("- uno\n- dos", "<ul>\n<li>uno</li>\n<li>dos</li>\n</ul>\n"),
        ("`código`", "<p><code>código</code></p>\n"),
        ("[web](https://example.org)", f'<p><a href="https://example.org" {REL}>web</a></p>\n'),
        ("[correo](mailto:dj@example.org)", f'<p><a href="mailto:dj@example.org" {REL}>correo</a></p>\n'),
        ("línea\\\notra", "<p>línea<br>\notra</p>\n"),
        ("***", "<hr>\n"),
    ],
)
def test_markdown_renders_the_usual_formatting(source, html):
    assert render_markdown(source) == html


def test_headings_go_two_levels_down_and_keep_their_order():
    assert render_markdown("# a\n## b\n### c\n#### d\n##### e") == (
        "<h3>a</h3>\n<h4>b</h4>\n<h5>c</h5>\n<h6>d</h6>\n<h6>e</h6>\n"
    )


@pytest.mark.parametrize("blank", ["", "   ", "\n\n\t"])
def test_blank_text_renders_to_nothing(blank):
    assert render_markdown(blank) == ""


def test_raw_html_is_shown_as_text():
    assert render_markdown("<b>hola</b>") == "<p>&lt;b&gt;hola&lt;/b&gt;</p>\n"


def test_javascript_links_are_not_links():
    assert render_markdown("[x](javascript:alert(1))") == "<p>[x](javascript:alert(1))</p>\n"


def test_links_to_other_schemes_lose_their_address():
    assert render_markdown("[x](ftp://example.org)") == f"<p><a {REL}>x</a></p>\n"


def test_images_never_load():
    html = render_markdown("![foto](https://example.org/a.png)")
    assert "<img" not in html
    assert html == f'<p>!<a href="https://example.org/a.png" {REL}>foto</a></p>\n'


def test_a_roll_card_imitation_keeps_no_class():
    html = render_markdown('<div class="roll-card">3d10</div>')
    assert html == '<p>&lt;div class="roll-card"&gt;3d10&lt;/div&gt;</p>\n'


def test_code_blocks_escape_their_content():
    assert render_markdown("```\n<script>alert(1)</script>\n```") == (
        "<pre><code>&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>\n"
    )
