"""What the node must have, as the user states it (``--expect "8x H100, driver>=550"``,
``expect = "..."`` in envcheck.toml): a report section rules check the node against."""

from __future__ import annotations

import re
from dataclasses import dataclass

from envcheck.errors import InputError
from envcheck.patterns import lazy

NO_GPU_WORDS = ("no-gpu", "nogpu", "no gpu", "cpu-only", "cpu only", "gpu-less", "none")


@dataclass(frozen=True)
class Expectation:
    """What the node must have (``--expect``): GPUs, a driver floor, or no GPU."""

    text: str
    gpu_count: int | None = None  # at least this many GPUs visible
    gpu_model: str | None = None  # a token their names must hold ("H100")
    min_driver: str | None = None  # the driver at least ("550", "550.54.15")
    no_gpu: bool = False  # the node is meant to have no GPU (an image build, a CPU worker)


_COUNT = lazy(r"^(\d+)\s*[x×*]\s*([A-Za-z][\w.\- ]*)$|^(\d+)$", re.IGNORECASE)
_DRIVER = lazy(r"^driver\s*>=\s*(\d+(?:\.\d+){0,2})$", re.IGNORECASE)
_GPUS = lazy(r"^gpus?\s*[=:]\s*(\d+)$", re.IGNORECASE)


def parse_expect(text: str, where: str = "--expect") -> Expectation:
    """``"8x H100, driver>=550"``, ``"gpus=4"``, ``"A100"``, ``"no-gpu"``; clauses separated by
    commas. Raises InputError naming the clause it cannot read."""
    clauses = [c.strip() for c in text.split(",") if c.strip()]
    if not clauses:
        raise InputError("empty expectation (e.g. '8x H100, driver>=550' or 'no-gpu')", where=where)
    count: int | None = None
    model: str | None = None
    driver: str | None = None
    no_gpu = False
    for clause in clauses:
        low = clause.lower()
        if low in NO_GPU_WORDS:
            no_gpu = True
        elif m := _DRIVER.match(clause):
            driver = m.group(1)
        elif m := _GPUS.match(clause):
            count = int(m.group(1))
        elif m := _COUNT.match(clause):
            count = int(m.group(1) or m.group(3))
            model = m.group(2).strip() if m.group(2) else None
        elif re.fullmatch(r"[A-Za-z][\w.\- ]*", clause) and not low.startswith("driver"):
            model = clause
        else:
            raise InputError(
                f"cannot read {clause!r} (clauses: '8x H100', 'gpus=8', 'H100', "
                "'driver>=550', 'no-gpu')",
                where=where,
            )
    if no_gpu and (count or model or driver):
        raise InputError("'no-gpu' cannot be combined with GPUs or a driver", where=where)
    if count == 0 and not model:
        no_gpu, count = True, None
    return Expectation(text, count, model, driver, no_gpu)
