"""Tests of prb_tasks/data/."""
