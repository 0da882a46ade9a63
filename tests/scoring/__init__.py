"""Tests of prb_tasks/scoring/."""
