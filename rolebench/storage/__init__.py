"""How bytes reach the disk safely.

atomic files, JSON/JSONL reading with one clear error, SQLite record stores, run-folder locks.
"""
