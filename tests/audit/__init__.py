"""Tests of prb_tasks/audit/."""
