"""RM-Bench (THU-KEG/RM-Bench): rows read from a local copy of ``total_dataset.json`` or the hub."""
