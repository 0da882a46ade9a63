"""The one exception type users see as a single line.

Every problem a user can fix (bad data, a broken template, a wrong option, an API key
that is refused) is raised as a :class:`PRBError` whose message is one actionable
line; ``prb`` prints that line instead of a traceback.
"""


class PRBError(ValueError):
    """A user-fixable problem; ``str(error)`` is one line saying what and what to do."""
