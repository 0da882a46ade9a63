"""Small text utilities shared by retrieval and the lexical baselines."""
