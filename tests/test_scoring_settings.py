"""The scoring settings the run definition holds below the scorers: the protocol names and the bootstrap."""

from __future__ import annotations

import pytest

from rolebench.errors import ConfigError
from rolebench.results.scoring_settings import PROTOCOLS, BootstrapSettings, check_protocol_name
from rolebench.run.definition import RunDefinition
from rolebench.scoring import protocols


def test_every_protocol_name_makes_that_protocol():
    """The names the run definition checks are exactly the protocols the scorers make."""
    assert tuple(protocols._CLASSES) == PROTOCOLS
    assert [protocols.get_protocol(name).name for name in PROTOCOLS] == list(PROTOCOLS)


def test_a_bad_protocol_is_one_line_from_the_definition_and_from_get_protocol():
    with pytest.raises(ConfigError) as from_definition:
        RunDefinition(model="baseline:rolegpt", tasks=("rolebench_demo",), protocol="rolelm").checked()
    with pytest.raises(ConfigError) as from_scorers:
        protocols.get_protocol("rolelm")
    assert str(from_definition.value) == str(from_scorers.value)
    assert "unknown scoring protocol 'rolelm'" in str(from_definition.value)
    assert "did you mean 'rolellm'?" in str(from_definition.value)
    assert check_protocol_name("opencompass") == "opencompass"


def test_bootstrap_settings_are_the_definitions():
    definition = RunDefinition(model="baseline:rolegpt", tasks=("rolebench_demo",), bootstrap=200, seed=3)
    assert definition.bootstrap_settings() == BootstrapSettings(resamples=200, seed=3)
    assert definition.bootstrap_settings().describe() == {"resamples": 200, "confidence": 0.95, "seed": 3}
