"""RoleBench's data.

The splits and their files, where files come from (local folder, Hub, packaged build), samples and
joins, `--limit` sampling, and the versioned dataset (build, card, manifest, Hub).
"""
