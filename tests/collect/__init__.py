"""Tests of prb_tasks/collect/."""
