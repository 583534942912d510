# The Playwright fixtures of tests/browser, for the sheet journeys.
from tests.browser.conftest import (  # noqa: F401
    browser,
    browser_problems,
    live_server,
    page,
    playwright,
    pytest_runtest_call,
)
