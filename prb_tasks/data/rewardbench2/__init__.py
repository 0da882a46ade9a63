"""RewardBench 2 (allenai/reward-bench-2): rows read from a local copy in the HF layout or the hub."""
