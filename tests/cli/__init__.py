"""Tests of prb_tasks/cli/."""
