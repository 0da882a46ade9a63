"""Reading a model's reply: verdicts, boxed verdicts, pointwise scores, ratings, grades, plans.

Each parser takes a judge's or grader's text and says what it read, or why it read nothing
(the error and skip markers a failed or skipped request leaves are here too). They sit on a
floor of their own, above ``common`` and ``text`` and below ``data``, ``documents`` and
``judge``, which read replies while loading files, building documents and running judges;
``scoring`` turns what they read into metrics. Named for what they take in, a reply.
"""
