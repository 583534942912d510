"""Pages keep a constant number of SQL queries as content grows (issue 4, item 6)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from campaigns import services
from campaigns.models import Membership, Post, Role
from campaigns.permissions import campaign_access
from tests.conftest import client_for
from tests.factories import CampaignFactory, CharacterFactory, UserFactory, add_member, write

pytestmark = pytest.mark.django_db


def _busy_scene(table, n: int):
    """A scene of ``n`` posts of every kind: characters, NPCs, whispers to the
    GM and to chosen members, quotes, edits and hidden posts."""
    t = table
    character = CharacterFactory(campaign=t.campaign, owner=t.player, name="Inés")
    scene = services.scene_create(campaign=t.campaign, title="La biblioteca")
    gm_access = campaign_access(t.gm, t.campaign)
    previous = None
    for i in range(n):
        kind = i % 6
        if kind == 0:
            post = write(
                scene, t.player, f"Busco en los estantes {i}.", voice=Post.Voice.CHARACTER, character=character
            )
        elif kind == 1:
            post = write(scene, t.gm, f"El bibliotecario carraspea {i}.", voice=Post.Voice.NPC, npc_name="Don Celso")
        elif kind == 2:
            post = write(scene, t.other, f"Solo para la DJ {i}.", recipients=Post.Recipients.GM, note="Nota.")
        elif kind == 3:
            post = write(
                scene,
                t.gm,
                f"Susurro {i}.",
                recipients=Post.Recipients.CHOSEN,
                chosen=[t.player, t.other],
                quote_of=previous,
            )
        elif kind == 4:
            post = write(scene, t.other, f"Cito {i}.", quote_of=previous)
            services.post_edit(access=gm_access, post=post, body=f"Cito {i}, editado.", note="", reason="Erratas")
        else:
            post = write(scene, t.player, f"Algo que ocultar {i}.")
            services.post_hide(post=post, actor=t.gm, reason="Fuera de tono")
        previous = post
    return scene


# Measured, then pinned; the same bound for a scene of 5 posts and of 60.
# Every signed-in reader pays for the session, the user, the unread
# notifications, the campaign, their membership, the scene, the count and
# the page of posts (its columns for the facts, then the posts to render; the
# chosen recipients for each), the aspects, the read marker (read,
# first unread, move forward); those who may write also for the form's
# characters and members. Since table play (issue 7) everyone also pays for
# the page's table rolls (one query, however many posts have rolls; pages
# with rolls add their activations and re-rolls, see tests/table); writers
# for their characters' skills (the roll rows) and their open roll requests,
# the GM for the NPC sheets and the scene's open requests instead; and the
# scene's secret rolls of the GM that the reader may see (one query).
SCENE_QUERIES = {"gm": 21, "player": 20, "other": 17, "reader": 18, "outsider": 12, "anonymous": 8}


@pytest.mark.parametrize("n", [5, 60])
def test_scene_page_query_count_is_constant_whatever_the_scene_length(table, django_assert_max_num_queries, n):
    scene = _busy_scene(table, n)
    visible = {"gm": 5, "player": 4, "other": 5, "reader": 3, "outsider": 3, "anonymous": 3}
    for standing, bound in SCENE_QUERIES.items():
        client = client_for(table.user(standing))
        with django_assert_max_num_queries(bound):
            response = client.get(scene.get_absolute_url())
        assert response.status_code == 200
        assert len(response.context["posts"]) == (visible[standing] if n == 5 else 20), standing
    # A later page of the long scene costs the same.
    client = client_for(table.player)
    with django_assert_max_num_queries(SCENE_QUERIES["player"]):
        response = client.get(scene.get_absolute_url() + "?pagina=2")
    assert response.context["page_obj"].number == (1 if n == 5 else 2)


@pytest.mark.parametrize("n", [1, 12])
def test_campaign_page_query_count_is_constant_as_scenes_and_posts_grow(table, django_assert_max_num_queries, n):
    t = table
    for i in range(n):
        scene = services.scene_create(
            campaign=t.campaign, title=f"Escena {i}", everyone=bool(i % 2), participants=[t.player, t.other]
        )
        write(scene, t.other, "Hola.")
        write(scene, t.gm, "Solo tú.", recipients=Post.Recipients.CHOSEN, chosen=[t.other])
        CharacterFactory(campaign=t.campaign, owner=add_member(t.campaign, Role.PLAYER))
    client = client_for(t.player)
    # session, user, unread notifications, campaign, membership, scenes, post
    # counts, new-post counts, members, characters, pending application; the
    # table's status around the cached page (issue 17: whom the scenes wait
    # for, the deadlines, who is away).
    with django_assert_max_num_queries(22):
        response = client.get(t.campaign.get_absolute_url())
    scenes = response.context["scenes"]
    # The whisper to Bruno is neither counted nor announced to Ana.
    assert [s.post_count for s in scenes] == [0, 1] + [1] * n
    assert [s.unread for s in scenes] == [0, 0] + [1] * n
    assert response.context["unread_total"] == n


@pytest.mark.parametrize("n", [1, 12])
def test_home_page_query_count_is_constant_as_campaigns_and_posts_grow(db, django_assert_max_num_queries, n):
    me = UserFactory()
    for i in range(n):
        public = CampaignFactory(title=f"Pública {i}")
        services.scene_create(campaign=public, title="Escena")
        mine = services.campaign_create(gm=UserFactory(), title=f"Mía {i}", system="hitos", visibility="private")
        Membership.objects.create(campaign=mine, user=me)
        write(services.scene_create(campaign=mine, title="Escena"), mine.gm, "Nuevo.")
    client = client_for(me)
    # session, user, unread notifications, count and page of public
    # campaigns, the user's own, their new-post counts; what waits for the
    # user in their campaigns («Pendiente», issue 17).
    with django_assert_max_num_queries(19):
        response = client.get(reverse("home"))
    assert len(response.context["my_campaigns"]) == n
    assert {c.unread for c in response.context["my_campaigns"]} == {1}
