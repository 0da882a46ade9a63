"""Tests of prb_tasks/testing/ (the fake server and fake batch APIs the other tests use)."""
