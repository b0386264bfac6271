"""Role-play sessions: several turns with a simulated user, judged turn by turn (RPBench-Auto's protocol).

`data`: the items (RPBench-Auto's characters and scenes, RoleBench's roles) and their prompts; `verdict`:
reading the judge's replies; `loop`: playing the sessions; `store`: each turn kept as it arrives, and
resuming; `stats` and `ratings`: the numbers (win rate, position bias, judges' agreement; Bradley-Terry /
Elo ratings). Beside `rolebench.judging` (independent of it); the commands reach it from above.
"""
