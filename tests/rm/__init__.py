"""Tests of prb_tasks/rm/."""
