"""Tests of prb_tasks/docs/."""
