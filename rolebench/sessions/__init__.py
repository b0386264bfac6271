"""Role-play sessions: several turns with a simulated user, judged turn by turn (RPBench-Auto's protocol).

`data`: the items (RPBench-Auto's characters and scenes, RoleBench's roles) and their prompts;
`settings`: the players, the settings and what decides a task's sessions; `verdict`: reading the judge's
replies; `loop`: playing the sessions; `store`: each turn kept as it arrives, and resuming; `rejudge`: a
second judge on the same turns; `stats` and `ratings`: the numbers (win rate, position bias, judges'
agreement; Bradley-Terry / Elo ratings). Beside `rolebench.judging` (independent of it); the commands
reach it from above.
"""
