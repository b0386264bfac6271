"""How bytes reach the disk safely.

Atomic files, JSON/JSONL reading with one clear error, SQLite record stores, run-folder locks.
"""
