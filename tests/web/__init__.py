"""Browser tests: the web page in Debian's headless Chromium."""
