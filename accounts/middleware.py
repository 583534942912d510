from django.utils import translation


class UserLanguageMiddleware:
    """Use a signed-in user's preferred language over the browser's.

    Runs after ``LocaleMiddleware`` and ``AuthenticationMiddleware``; a user
    who never chose a language keeps what ``LocaleMiddleware`` picked (the
    language cookie, then Accept-Language).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = request.user
        if user.is_authenticated and user.language:
            translation.activate(user.language)
            request.LANGUAGE_CODE = user.language
        return self.get_response(request)
