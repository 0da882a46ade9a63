"""Tests of prb_tasks/text/."""
