"""End-to-end tests: the real command line in subprocesses, a fresh-venv install, a browser, a real model."""
