"""`rolebench sweep`: every (model, task) job of a sweep file on Ray, each model into its own run folder.

- `plan`: what runs (`SweepPlan`, one `ModelRun` per model), built and checked by the command;
- `job`: what a Ray worker does for one model (evaluate, then judge) and how it reports progress;
- `state`: DIR/sweep.json, each job's state, attempts, node and timings, written atomically;
- `driver`: starts or joins Ray, skips finished runs, submits the rest, one progress bar, the summary.

Ray is optional (`pip install "rolebench[ray]"`) and imported only when a sweep runs.
"""
