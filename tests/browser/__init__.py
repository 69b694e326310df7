"""The debug panel in a real browser (Debian's Chromium through Playwright)."""
