"""Tests of prb_tasks/common/."""
