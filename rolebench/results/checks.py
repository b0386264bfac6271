"""The checks of the values a results document carries that its models leave untyped: the bootstrap
settings (`config.bootstrap`), the floors' values and the flags of a task or group, the names they use.
A file with other shapes or values is one clear error when it is read, never a crash in a reader.
"""

from __future__ import annotations

import re
from typing import Any

from model_adapters.baseline import FLOOR_SPECS

BOOTSTRAP_KEYS = {"resamples": "an integer >= 0", "confidence": "a number in (0, 1)", "seed": "an integer"}


def check_bootstrap(value: dict[str, Any]) -> dict[str, Any]:
    """The bootstrap settings a results file records (`resamples`, `confidence`, `seed`), checked: an
    unknown key or a mistyped value is one clear error, never a crash in whatever reads them later."""
    for key, given in value.items():
        if key not in BOOTSTRAP_KEYS:
            raise ValueError(f"unknown bootstrap setting {key!r} (known: {', '.join(BOOTSTRAP_KEYS)})")
        number = isinstance(given, int | float) and not isinstance(given, bool)
        valid = {
            "resamples": isinstance(given, int) and not isinstance(given, bool) and given >= 0,
            "confidence": number and 0 < given < 1,
            "seed": isinstance(given, int) and not isinstance(given, bool),
        }[key]
        if not valid:
            raise ValueError(f"bootstrap {key} must be {BOOTSTRAP_KEYS[key]}, not {given!r}")
    return value


def is_number(value: Any) -> bool:
    """None, or a number that is not a bool."""
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def is_fraction(value: Any) -> bool:
    """None, or a finite number in [0, 1] (a score, a share): what every floor value is."""
    return value is None or (is_number(value) and 0.0 <= value <= 1.0)


NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")  # a flag, protocol or metric name
MAX_FLAGS = 16  # distinct flags a number may carry (rolebench knows 4; a newer one may add some)


def check_floors_and_flags(extra: dict[str, Any] | None) -> None:
    """`floors` ({floor spec: {protocol: {metric: number in [0, 1] or null}}}, specs of
    `model_adapters.baseline.FLOORS`) and `flags` (a list of distinct names) are read by the summary,
    the report and the leaderboard: a file with other shapes or values is refused here."""
    extra = extra or {}
    flags = extra.get("flags")
    if flags is not None:
        if not (isinstance(flags, list) and all(isinstance(f, str) for f in flags)):
            raise ValueError("flags must be a list of names")
        if len(flags) > MAX_FLAGS or len(set(flags)) != len(flags):
            raise ValueError(f"flags must be at most {MAX_FLAGS} distinct names, not {len(flags):,} entries")
        bad = next((f for f in flags if not NAME.match(f)), None)
        if bad is not None:
            raise ValueError(f"a flag is a short lower-case name, not {bad[:40]!r}")
    floors = extra.get("floors")
    if floors is None:
        return
    shaped = isinstance(floors, dict) and all(
        isinstance(block, dict)
        and all(
            isinstance(protocol, str)
            and NAME.match(protocol)
            and isinstance(values, dict)
            and all(
                isinstance(metric, str) and NAME.match(metric) and is_number(v)
                for metric, v in values.items()
            )
            for protocol, values in block.items()
        )
        for block in floors.values()
    )
    if not shaped:
        raise ValueError("floors must map each floor to {protocol: {metric: number}}")
    unknown = next((spec for spec in floors if spec not in FLOOR_SPECS), None)
    if unknown is not None:
        raise ValueError(f"unknown floor {str(unknown)[:40]!r} (floors: {', '.join(FLOOR_SPECS)})")
    for spec, block in floors.items():
        for protocol, values in block.items():
            for metric, value in values.items():
                if not is_fraction(value):
                    raise ValueError(
                        f"floor {spec} {protocol} {str(metric)[:40]} must be a number in [0, 1] or null, "
                        f"not {str(value)[:40]}"
                    )
