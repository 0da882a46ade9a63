"""Turning model outputs into per-pair outcomes and metrics."""
