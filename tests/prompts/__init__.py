"""Tests of prb_tasks/prompts/."""
