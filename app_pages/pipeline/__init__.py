"""The CPU-GPU pipeline page (May & Voigt 2010): ``page.py`` is the Streamlit script."""
