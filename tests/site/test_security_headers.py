import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_pages_carry_a_strict_content_security_policy(client):
    response = client.get(reverse("home"))
    policy = dict(
        directive.strip().split(" ", 1) for directive in response.headers["Content-Security-Policy"].split(";")
    )
    assert policy["default-src"] == "'self'"
    assert policy["script-src"] == "'self'"
    assert policy["style-src"] == "'self'"
    assert policy["img-src"] == "'self' data:"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["object-src"] == "'none'"
    assert "unsafe-inline" not in response.headers["Content-Security-Policy"]
    assert "http" not in response.headers["Content-Security-Policy"]


def test_pages_carry_the_usual_security_headers(client):
    response = client.get(reverse("home"))
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"


def test_pages_load_nothing_from_other_sites_and_have_no_inline_code(client):
    html = client.get(reverse("home")).text
    assert "http://" not in html and "https://" not in html
    assert "<style" not in html
    # Every script tag loads a file of ours.
    assert html.count("<script") == html.count('<script src="/static/')


def test_htmx_sends_the_csrf_token_from_the_body(client):
    html = client.get(reverse("home")).text
    assert '<body data-hx-headers=\'{"X-CSRFToken": "' in html


def test_htmx_indicator_styles_are_off_and_ours_ship(client):
    html = client.get(reverse("home")).text
    assert '"includeIndicatorStyles": false' in html
    css = client.get("/static/css/site.css")
    body = b"".join(css.streaming_content)
    css.close()
    assert b".htmx-request .htmx-indicator" in body


def test_vendored_libraries_are_served_from_this_site_with_their_licences(client):
    for path in [
        "/static/vendor/htmx/htmx.min.js",
        "/static/vendor/htmx/LICENSE",
        "/static/vendor/bootstrap/bootstrap.min.css",
        "/static/vendor/bootstrap/bootstrap.bundle.min.js",
        "/static/vendor/bootstrap/LICENSE",
    ]:
        response = client.get(path)
        response.close()
        assert response.status_code == 200, path
