"""Reading finished runs back and comparing them (``prb compare``)."""
