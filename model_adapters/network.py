"""Fail fast and quietly without a network: the Hugging Face Hub is probed once, and when it does not
answer, huggingface_hub (and transformers with it) is switched to offline mode for this process.

Without this, a missing network costs tens of seconds of retries and a screen of duplicated warnings
per file before the one-line error. Offline, files already in the Hub cache are used at once and a
missing one is refused at once. `HF_HUB_OFFLINE=1` skips the probe. `why_offline` says which of the two
it was (for the one-line error), and `reachable` is the same TCP probe for any server (a local judge's).
"""

from __future__ import annotations

import functools
import os
import socket
from urllib.parse import urlsplit

PROBE_TIMEOUT_S = 3.0
DEFAULT_ENDPOINT = "https://huggingface.co"


def reachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the URL's host and port opens within `timeout` seconds."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return False
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except (OSError, ValueError):  # ValueError: a port out of range
        return False


@functools.cache
def hub_reachable(endpoint: str) -> bool:
    """Whether a TCP connection to the Hub endpoint opens within `PROBE_TIMEOUT_S` (asked once)."""
    return reachable(endpoint)


_switched: dict[str, str] = {}  # {"endpoint": ...} once the probe turned offline mode on in this process


def hub_endpoint() -> str:
    """The Hub endpoint huggingface_hub talks to (HF_ENDPOINT, else its default)."""
    from huggingface_hub import constants

    return os.environ.get("HF_ENDPOINT") or constants.ENDPOINT or DEFAULT_ENDPOINT


def offline() -> bool:
    """True when the Hub cannot be reached (or offline mode is already on); then offline mode is turned on."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return True
    endpoint = hub_endpoint()
    if hub_reachable(endpoint):
        return False
    constants.HF_HUB_OFFLINE = True  # read at call time by huggingface_hub and transformers
    os.environ["HF_HUB_OFFLINE"] = "1"  # for libraries (and subprocesses) that read the environment
    _switched["endpoint"] = endpoint
    return True


def why_offline() -> tuple[str, str]:
    """(why the Hub is not used, what to do) while offline mode is on: the probe found no Hub, or the
    user turned offline mode on (HF_HUB_OFFLINE)."""
    from huggingface_hub import constants

    endpoint = _switched.get("endpoint")
    if endpoint is not None and constants.HF_HUB_OFFLINE:
        return f"the Hub ({endpoint}) does not answer", "connect to the network (or check HF_ENDPOINT)"
    return "Hub offline mode is on (HF_HUB_OFFLINE)", "unset HF_HUB_OFFLINE"
