import factory

from accounts.models import User
from campaigns.models import Campaign, Visibility


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"jugador{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    display_name = factory.Sequence(lambda n: f"Jugador {n}")
    language = "es"
    password = factory.django.Password("clave-de-prueba-123")


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Campaign

    title = factory.Sequence(lambda n: f"Partida {n}")
    slug = factory.Sequence(lambda n: f"partida-{n}")
    system = "hitos"
    visibility = Visibility.PUBLIC
    gm = factory.SubFactory(UserFactory)
