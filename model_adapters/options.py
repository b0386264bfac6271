"""Backend options (`--model-args key=value,...`): one pydantic model per backend, typos refused.

Values arrive as strings from the command line (or typed, from Python and YAML) and are converted
to the field types; an unknown option or a bad value is one ConfigError naming the option and what
is allowed. Options that change how requests travel but never what is generated (timeouts,
retries, threads, URLs of the same model) are listed in `transport`: they stay out of cache keys.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from model_adapters.errors import ConfigError


class AdapterOptions(BaseModel):
    """Base of every backend's options: frozen, and no field that is not declared."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    transport: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def parse(cls, raw: Mapping[str, Any], backend: str, where: str = "--model-args") -> Self:
        """Validated options from `raw`; the string "none" clears an optional field."""
        known = list(cls.model_fields)
        for key in raw:
            if key not in cls.model_fields:
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f"did you mean {close[0]}? " if close else ""
                allowed = ", ".join(known) if known else "none"
                raise ConfigError(
                    f"unknown option {key!r} for {backend} models",
                    where=where,
                    fix=hint + "known options: " + allowed,
                )
        values = {
            k: None if isinstance(v, str) and v.strip().lower() == "none" else v for k, v in raw.items()
        }
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(map(str, first["loc"])) or "?"
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(
                f"option {key}={values.get(key)!r} for {backend} models: {message}",
                where=where,
                fix=f"give {key} a valid value",
            ) from None

    def identity(self) -> dict[str, Any]:
        """The options that can change what the model generates (everything but `transport`)."""
        return {k: v for k, v in self.model_dump(mode="json").items() if k not in self.transport}


class NoOptions(AdapterOptions):
    """A backend that takes no options."""
