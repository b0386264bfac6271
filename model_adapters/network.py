"""Fail fast and quietly without a network: the Hugging Face Hub is probed once, and when it does not
answer, huggingface_hub (and transformers with it) is switched to offline mode for this process.

Without this, a missing network costs tens of seconds of retries and a screen of duplicated warnings
per file before the one-line error. Offline, files already in the Hub cache are used at once and a
missing one is refused at once. `HF_HUB_OFFLINE=1` skips the probe.
"""

from __future__ import annotations

import functools
import os
import socket
from urllib.parse import urlsplit

PROBE_TIMEOUT_S = 3.0
DEFAULT_ENDPOINT = "https://huggingface.co"


@functools.cache
def hub_reachable(endpoint: str) -> bool:
    """Whether a TCP connection to the Hub endpoint opens within `PROBE_TIMEOUT_S` (asked once)."""
    parts = urlsplit(endpoint)
    host = parts.hostname
    if not host:
        return False
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


def offline() -> bool:
    """True when the Hub cannot be reached (or offline mode is already on); then offline mode is turned on."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return True
    if hub_reachable(os.environ.get("HF_ENDPOINT") or constants.ENDPOINT or DEFAULT_ENDPOINT):
        return False
    constants.HF_HUB_OFFLINE = True  # read at call time by huggingface_hub and transformers
    os.environ["HF_HUB_OFFLINE"] = "1"  # for libraries (and subprocesses) that read the environment
    return True
