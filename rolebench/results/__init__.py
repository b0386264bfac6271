"""The typed records of a run (results.json, samples lines) and their reading and writing."""
