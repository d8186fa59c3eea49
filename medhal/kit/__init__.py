"""The kit: what an environment is built from (task data and options, reading replies, loading rows and
pinned assets, the harness). Imports no other layer of medhal."""
