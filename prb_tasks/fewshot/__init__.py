"""Few-shot user adaptation: evaluate a personalization *method*, not a fixed model.

``split`` holds the protocol (seen and unseen users, each unseen user's support pool
and fixed query set); ``method`` the interface a method implements and ``registry``
how one is found by name (``User`` carries demographics and profile text, ``Pair`` the
reason and value tags of a choice); ``context`` renders a user as text to a budget and
``demographics`` as feature columns; ``linear`` and ``baselines`` the shipped CPU baselines;
``sources`` every user's pairs and the split a run shares; ``features`` text-embedding
features; ``metrics`` the k-curve statistics; ``evaluate`` runs a method over a split outside
the harness (benchmarks, tests); ``model`` is the ``prb-method`` lm-eval backend.
"""
