"""Tests of prb_tasks/documents/."""
