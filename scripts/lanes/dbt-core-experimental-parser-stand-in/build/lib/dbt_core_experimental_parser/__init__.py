"""Empty: see pyproject.toml beside this folder."""
