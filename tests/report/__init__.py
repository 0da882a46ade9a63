"""Tests of prb_tasks/report/."""
