"""The error every data loader raises for a file or row that cannot be used."""

from prb_tasks.common.errors import PRBError


class DataError(PRBError):
    """A benchmark file or row that cannot be used; the message is one actionable line."""


class NoDataError(DataError):
    """The place given holds none of a family's data; the caller adds how to give it."""
