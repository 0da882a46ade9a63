"""What ``prb rl --engine verl`` needs before it writes anything, each refused in one line.

verl and what its ``main_ppo`` imports with vLLM rollouts installed (the ``verl`` extra; each missing
one named), a verl that reads the keys prb writes (:mod:`.pin`); then either a Ray cluster that answers
(gRPC) at ``--ray-address``
(or ``$RAY_ADDRESS``: its GPUs are the cluster's), or at least one CUDA GPU on this machine
(verl starts a Ray cluster of its own here). Nothing is imported from verl or Ray: finding the
package and an HTTP/2 exchange with the cluster's address is enough to refuse early.
"""

from __future__ import annotations

import importlib.util
import os
import socket
from importlib.metadata import version
from typing import Optional

from prb_tasks.common.errors import PRBError
from prb_tasks.common.install_hint import pip_install
from prb_tasks.rl.verl_engine.pin import KEYS_FROM, REWARD_FUNCTION, VERL_VERSION, version_tuple

#: What ``main_ppo`` imports with vLLM rollouts: (the package's name on PyPI, the module it installs).
#: verl 0.9's default trainer imports ``transfer_queue`` unconditionally; ``rollout.name=vllm`` needs vLLM,
#: whose server verl drives through uvicorn and fastapi.
PIECES = (("verl", "verl"), ("vllm", "vllm"), ("TransferQueue", "transfer_queue"), ("uvicorn", "uvicorn"),
          ("fastapi", "fastapi"))

#: Ports Ray listens on when an address names none: the GCS (``ray start --head``) and the Ray Client.
GCS_PORT = 6379
CLIENT_PORT = 10001
#: Seconds to wait for the cluster's connection and for its first reply.
TIMEOUT = 5.0


def ray_endpoint(address: str) -> tuple[str, int]:
    """(host, port) of a Ray address: ``HOST:PORT``, ``HOST`` or ``ray://HOST[:PORT]``.

    Args:
        address: what ``ray.init(address=...)`` takes (``auto`` is not accepted here: name the head).
    """
    client = address.startswith("ray://")
    rest = address[len("ray://"):] if client else address
    host, sep, port = rest.rpartition(":")
    if not sep:
        host, port = rest, ""
    if not host or (port and not port.isdigit()):
        raise PRBError(f"prb rl: --ray-address '{address}' is not HOST:PORT (e.g. 10.0.0.1:6379, the address "
                       "`ray start --head` prints)")
    return host, int(port) if port else (CLIENT_PORT if client else GCS_PORT)


#: What an HTTP/2 client sends first (RFC 9113 section 3.4), then an empty SETTINGS frame.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
SETTINGS = 4


def speaks_grpc(host: str, port: int, timeout: float) -> bool:
    """Whether ``host:port`` answers an HTTP/2 client preface with a SETTINGS frame, as every gRPC
    server does (Ray's GCS and its client server are gRPC). A bare TCP accept is not enough: proxies and
    firewalls accept connections for addresses nothing listens on.

    Args:
        host, port: the address.
        timeout: seconds for the connection and for the reply.
    """
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(PREFACE)
        header = b""
        try:
            while len(header) < 9:
                chunk = sock.recv(9 - len(header))
                if not chunk:
                    return False
                header += chunk
        except (TimeoutError, ConnectionError):
            return False
    return header[3] == SETTINGS


def check(ray_address: Optional[str], timeout: Optional[float] = None) -> Optional[str]:
    """Refuse (one line) what cannot run verl; the Ray address to use (None: a cluster on this machine).

    Args:
        ray_address: ``--ray-address`` (None: ``$RAY_ADDRESS``, else this machine).
        timeout: seconds to wait for the cluster (None: :data:`TIMEOUT`).
    """
    missing = [name for name, module in PIECES if importlib.util.find_spec(module) is None]
    if missing:
        raise PRBError(f"prb rl --engine verl needs {', '.join(missing)}, not installed here: {pip_install('verl')} "
                       "with -c constraints-verl.txt in a second environment on the GPU machine "
                       "(docs/rl-downstream.md), or use --engine trl")
    installed = version("verl")
    if version_tuple(installed) < version_tuple(KEYS_FROM):
        raise PRBError(f"prb rl --engine verl: verl {installed} reads the reward function elsewhere than prb "
                       f"writes it ({REWARD_FUNCTION}.*, verl {KEYS_FROM} and later); install verl=={VERL_VERSION}")
    address = ray_address or os.environ.get("RAY_ADDRESS") or None
    if address and address != "local":
        host, port = ray_endpoint(address)
        try:
            answered = speaks_grpc(host, port, TIMEOUT if timeout is None else timeout)
        except OSError as exc:
            raise PRBError(f"prb rl: the Ray cluster at {host}:{port} cannot be reached ({exc.strerror or exc}); "
                           "start it with `ray start --head` on the head node, or drop --ray-address to run "
                           "on this machine") from None
        if not answered:
            raise PRBError(f"prb rl: {host}:{port} accepts connections but does not answer as a Ray cluster (no "
                           "gRPC reply); give the address `ray start --head` printed (port 6379 by default)")
        return address
    import torch

    if not torch.cuda.is_available():
        raise PRBError("prb rl --engine verl needs a CUDA GPU (verl's FSDP workers and vLLM rollouts) and this "
                       "machine has none; use --engine trl here, or --ray-address HOST:PORT of a GPU cluster")
    return None
