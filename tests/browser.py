"""Helpers for browser tests: Debian's Chromium driven by Playwright, and a screenshot folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("BULLRING_CHROMIUM", "/usr/bin/chromium")
"""The browser binary: Debian's ``chromium`` package (never a downloaded build)."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def launch_chromium() -> Iterator[object]:
    """Yield a Playwright Browser on Debian's Chromium; fail under CI=true when it is
    missing, skip otherwise."""
    if not Path(CHROMIUM).exists():
        message = f"{CHROMIUM} is missing: apt-get install -y chromium"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def screenshot_dir(fallback: Path) -> Path:
    """Where tests save screenshots: $BULLRING_ARTIFACTS/screenshots, else ``fallback``."""
    root = os.environ.get("BULLRING_ARTIFACTS")
    folder = Path(root) / "screenshots" if root else fallback
    folder.mkdir(parents=True, exist_ok=True)
    return folder
