"""Loading and validating benchmark data.

Shared pieces live here (file readers, the error type, the profile store); each
benchmark family has its own subpackage (``personalized_rb``) with its schema,
reader and sources.
"""
