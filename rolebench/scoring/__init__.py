"""ROUGE-L.

Tokenizers, the LCS, the protocols (`rolellm`, `rolebench`, `opencompass`), the metrics CUS/RAW/SPE, and
aggregation into task and group results.
"""
