"""The app's pages: one script (or one package with page.py) per page."""
