"""The scene page leads to the table: combat, horror, opposed rolls, drama
points and the roll log, with the viewer's drama points in sight."""

from django.urls import reverse

from tests.conftest import client_for


def _scene(play, user):
    return client_for(user).get(reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk]))


def test_the_scene_links_the_table_pages(play):
    html = _scene(play, play.reader).content.decode()
    for name in ("hitos:combat", "hitos:horror", "hitos:opposed"):
        assert reverse(name, args=[play.campaign.slug, play.scene.pk]) in html
    assert reverse("hitos:drama", args=[play.campaign.slug]) in html
    assert f"{reverse('rolls:roll-log', args=[play.campaign.slug])}?escena={play.scene.pk}" in html


def test_a_player_sees_their_drama_points_and_the_gm_the_pool(play):
    html = _scene(play, play.ana).content.decode()
    assert f'id="puntos-ch{play.ines.pk}"' in html and "Inés Salcedo: 3 puntos dramáticos" in html
    assert 'id="puntos-dj"' not in html
    assert "Tomás Ferrer: 3" not in html
    html = _scene(play, play.gm).content.decode()
    assert "Reserva de la dirección: 5 puntos" in html


def test_anonymous_readers_see_no_drama_link(play):
    response = client_for(None).get(reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk]))
    assert response.status_code == 200
    assert reverse("hitos:drama", args=[play.campaign.slug]) not in response.content.decode()


def test_the_off_game_scene_has_no_table(play):
    from campaigns.models import Scene

    offgame = Scene.objects.create(campaign=play.campaign, title="Fuera de juego", is_offgame=True)
    html = client_for(play.gm).get(reverse("table:scene-detail", args=[play.campaign.slug, offgame.pk])).text
    for name in ("hitos:combat", "hitos:horror", "hitos:opposed", "table:request-create", "hitos:secret-roll-create"):
        url = reverse(name, args=[play.campaign.slug, offgame.pk])
        assert url not in html, name
        assert client_for(play.gm).get(url).status_code == 404, name
    assert "Pedir una tirada" not in html and "Tiradas secretas" not in html
