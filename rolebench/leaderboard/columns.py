"""The leaderboard's columns and what its header says of them, for every format (Markdown, CSV, LaTeX,
the page). The metrics' columns, names and explanations come from `rolebench.scoring.metrics`."""

from __future__ import annotations

from rolebench.leaderboard.rows import F_AVG
from rolebench.scoring.flags import ORDER as FLAG_ORDER
from rolebench.scoring.flags import describe
from rolebench.scoring.metrics import AVG, LABELS, METRIC_KEYS, METRICS

SHOWN_SCORES = (*METRIC_KEYS, AVG, F_AVG)  # the score columns of every table, in order
SCORE_COLUMNS = (*SHOWN_SCORES, "win_rate", "win_rate_lc")  # the columns whose best value is bold
HEADERS = [
    "Rank (95% CI)",
    "Model",
    "Prompting",
    *(LABELS[m] for m in (*METRIC_KEYS, AVG)),
    "F avg",
    "F rank (95% CI)",
    "Answer len (ref, cut)",
    "Looping",
    "Prompt tok · latency s · answers/s",
    "Win rate % (95% CI)",
    "LC win rate % (95% CI)",
    "W/T/L",
    "n",
    "Date",
    "Flags",
    "Notes",
]
CSV_COLUMNS = [
    "board",
    "split",
    "split_label",
    "source",
    "rank",
    "rank_best",
    "rank_worst",
    "rank_f",
    "rank_f_best",
    "rank_f_worst",
    "model",
    "spec",
    *METRIC_KEYS,
    AVG,
    f"{AVG}_low",
    f"{AVG}_high",
    *(f"f_{m}" for m in METRIC_KEYS),
    F_AVG,
    f"{F_AVG}_low",
    f"{F_AVG}_high",
    "answer_words",
    "reference_words",
    "cut_at_limit",
    "looping",
    "elicitation",
    "prompt_tokens",
    "seconds_per_answer",
    "answers_per_s",
    "win_rate",
    "win_rate_low",
    "win_rate_high",
    "win_rate_lc",
    "win_rate_lc_low",
    "win_rate_lc_high",
    "wins",
    "ties",
    "losses",
    "judge",
    "n",
    "n_full",
    "n_not_covered",
    "limit",
    "partial",
    "protocol",
    "dataset",
    "date",
    "run",
    "flags",
    "flag_meanings",
    "tied_with",
    "notes",
]
ABOUT_LEAD = (
    "ROUGE-L (fractions, higher is better) as the RoleLLM paper computes it (recall, protocol `rolellm`; "
    "on the released RoleGPT answers it reproduces the paper's RoleGPT figures): "
    + ", ".join(f"{m.label} = {m.about}" for m in METRICS)
    + "; avg = their mean, by which rows are ranked, as in the paper."
)
ABOUT_MORE = (
    "Recall rewards long answers, so beside it: F avg and F rank, the same avg as an F-measure "
    "(protocol `rolebench`) and the rank it gives, which length cannot buy; the answers' length against "
    "the references' (words, characters for Chinese) and the share cut at the token limit; the share of "
    "answers that loop; flags; and the floors, null baselines that answer with the question, the "
    "role's description or the train file's answer to the same instruction (unranked rows). "
    "Prompting (on the page: under the model's name) = how the role "
    "was prompted: the paper's zero-shot, few-shot prompt or few-shot dialogue engineering "
    "(demonstrations from the role's own script); Prompt tok · latency s · answers/s (the page's Prompt "
    "column) = what that costs: mean prompt tokens; the latency, the mean seconds one answer took from its "
    "request to its last token (answers generated together overlap, so this is not 1 / throughput); and "
    "the throughput, the answers the run generated per second of wall-clock time (loading the model "
    "included; answers read from the store not counted). Win rate = share of "
    "answers an LLM judge prefers over the RoleGPT baseline (ties count half), in percent; LC win rate "
    "= the same, length-controlled (AlpacaEval 2.0's regression, read at equal lengths). Rank (and F rank) "
    "with its 95% interval [best–worst]: the items of the split resampled 1,000 times, jointly for every "
    "ranked row of the board (seed 0), the rows ranked in each resample; rows whose intervals overlap are "
    "statistically tied, and say so in their notes. Each table is "
    "one board: rows scored with the same protocol, dataset files, judge and task versions; rows of "
    "different boards are never ranked together. Partial rows (a --limit run or a missing task) are "
    "listed unranked, and so is a row (a floor included) whose avg is the mean of other metrics or over "
    'other items than the ranked rows\' (its notes say so). "reported (paper)" rows are the RoleLLM '
    "paper's numbers as printed."
)
ABOUT = f"{ABOUT_LEAD} {ABOUT_MORE}"
FLAG_LEGEND = [describe(flag) for flag in FLAG_ORDER]
