"""Tests of prb_tasks/fewshot/."""
