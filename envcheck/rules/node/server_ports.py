"""NET162: a server could not bind its TCP port because another process on the node already
listens on it (asyncio's `error while attempting to bind on address ('0.0.0.0', 8000): address
already in use` as uvicorn logs it for vLLM's and SGLang's servers, a bare `OSError: [Errno 98]
Address already in use`, Flask's `Port 5000 is in use by another program`); the fix names the
port where the line states it."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual


@rule("NET162", "server-port-in-use", Severity.ERROR)
def server_port_in_use(facts: Facts) -> Iterable[Hit]:
    """A server's TCP port is already taken by another process on the node

    ## What it checks
    Only a log says it: a server that could not listen on its port, in the words of the layer
    that tried: asyncio's `error while attempting to bind on address ('0.0.0.0', 8000): address
    already in use` (uvicorn under vLLM's and SGLang's OpenAI-compatible servers, FastAPI
    apps), a socket's bare `OSError: [Errno 98] Address already in use` (48 on macOS), Flask's
    `Port 5000 is in use by another program`. torch.distributed's own store has its own rule
    (NET160).

    ## Why it matters
    One process per port: a server that cannot bind exits at start. In RL and serving stacks
    the process holding the port is most often the same server from an earlier run (a rollout
    or reward server that outlived a killed job, a container still running), or two servers
    on one node given the same port.

    ## Example
    `vllm serve` restarted while the previous instance still runs: `ERROR: [Errno 98] error
    while attempting to bind on address ('0.0.0.0', 8000): address already in use`.

    ## Fix
    Find the process that holds the port (`ss -ltnp 'sport = :8000'`, or `lsof -i :8000`) and
    stop it if it is a leftover; or start the server on a free port (`--port`).

    ## References
    - python/cpython Lib/asyncio/base_events.py (create_server's bind error)
    - pallets/werkzeug src/werkzeug/serving.py (`Port ... is in use by another program`)
    - https://docs.vllm.ai/en/latest/cli/serve.html (`--port`)
    """
    raise Skip("only a log line states a port a server could not bind", "log.network")


@from_log("NET162")
def server_port_in_use_in_log(facts: Facts, line: LogLine) -> Hit:
    """The port where the line names it (asyncio's address tuple, Flask's sentence)."""
    port = line.stated.get("port")
    which = f"port {port}" if port else "its port"
    where = port or "<port>"
    return Hit(
        f"a server could not listen on {which} (line {line.line}): another process on the "
        "node already does, most often the same server left from an earlier run",
        evidence={"line": line.line, "port": port},
        fix=fix(
            f"Stop the process that holds {which} if it is a leftover, or start the server on "
            "a free port (--port)",
            "manual",
            manual(f"ss -ltnp 'sport = :{where}'   # names the process that listens on it"),
            manual("kill <pid>   # a leftover server of an earlier run"),
            manual("--port <a free port>   # else, when starting the server"),
        ),
    )
