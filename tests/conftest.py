from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens", action="store_true", help="rewrite tests/goldens from current output"
    )


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture(scope="session")
def browser():  # type: ignore[no-untyped-def]
    """Headless Chromium (Debian's chromium and chromium-driver, driven by
    selenium), to look at reports as a person's browser lays them out.
    Skipped where there is none, unless MWMS_REQUIRE_BROWSER=1 (CI sets it):
    then a missing browser is a failure."""
    import os
    import shutil

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        webdriver = None  # type: ignore[assignment]
    if chromium is None or driver is None or webdriver is None:
        why = "no headless Chromium here (chromium, chromium-driver, selenium)"
        if os.environ.get("MWMS_REQUIRE_BROWSER") == "1":
            pytest.fail(why)
        pytest.skip(why)
    options = Options()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ):
        options.add_argument(arg)
    options.binary_location = chromium
    session = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield session
    finally:
        session.quit()
