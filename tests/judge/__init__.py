"""Tests of prb_tasks/judge/."""
