"""``prb collect``: gather one user's preferences in a browser.

The answers are exported in the format ``personalized_custom`` reads.

Data flow: ``pairs`` reads the prompts and answer pairs (``generate`` writes the answers
when only prompts are given), ``form`` the profile fields and value tags, ``journal``
appends each participant's answers to disk, ``store`` keeps the participants and their
private links, ``export`` turns the journals into the per-user JSON file, ``app`` is
the web app and ``command`` the ``serve`` / ``export`` / ``status`` subcommands.
"""

__all__: list[str] = []
