"""requirements_in_effect: the text fast path for extra-only markers agrees with packaging."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.requirements import InvalidRequirement, Requirement

from envcheck.model.report import Distribution
from envcheck.rules.node.packages import requirements_in_effect

MARKERS = {
    "implementation_name": "cpython",
    "implementation_version": "3.11.7",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_release": "6.1",
    "platform_system": "Linux",
    "platform_version": "#1",
    "python_full_version": "3.11.7",
    "platform_python_implementation": "CPython",
    "python_version": "3.11",
    "sys_platform": "linux",
}

_MARKER_PARTS = [
    'extra == "dev"',
    "extra == 'test'",
    'extra=="x"',
    'python_version < "3.12"',
    'python_version >= "3.12"',
    'sys_platform == "win32"',
    'extra == "dev" or python_version < "3.12"',
    'python_version < "3.12" and extra == "dev"',
    '(extra == "a" or extra == "b")',
    '"dev" == extra',
    # a conjunction ending in the extra (Ray's and urllib3's forms), and what only looks like one
    'sys_platform != "darwin" and extra == "cgraph"',
    "(platform_python_implementation == 'CPython') and extra == 'brotli'",
    'sys_platform == "linux" and python_version < "3.14" and extra == "serve"',
    'python_version < "3.12" or sys_platform == "linux" and extra == "x"',
    '(python_version < "3.12" or sys_platform == "linux") and extra == "x"',
    'platform_version == "a or b" and extra == "x"',
    'extra == "a" and extra == "b"',
    'python_version <<< "3" and extra == "x"',
    '(python_version < "3.12") or extra == "x"',
]


def _slow(lines: list[str]) -> list[str]:
    env = {**MARKERS, "extra": ""}
    out = []
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:  # skipped by the rule as well (PKG101 reads what parses)
            continue
        if req.marker is None or req.marker.evaluate(env):
            out.append(str(req))
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["numpy", "torch>=2.1", "ray[default]==2.9", "pkg @ https://h/x.whl"]),
            st.one_of(st.none(), st.sampled_from(_MARKER_PARTS)),
            st.sampled_from(["; ", ";", " ;  "]),
        ),
        max_size=6,
    )
)
def test_fast_path_agrees_with_full_marker_evaluation(
    parts: list[tuple[str, str | None, str]],
) -> None:
    lines = [name if marker is None else f"{name}{sep}{marker}" for name, marker, sep in parts]
    dist = Distribution(name="x", version="1.0", requires=tuple(lines))
    assert [str(r) for r in requirements_in_effect(dist, MARKERS)] == _slow(lines)
