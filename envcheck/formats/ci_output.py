"""The CI formats by name (``--output-format github|junit|sarif``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the record only: naming the formats (CI_FORMATS) imports no formatter
    from envcheck.formats.ci import CiRun


def render(fmt: str, run: CiRun) -> str:
    """``run`` in one of the CI formats: github, junit or sarif."""
    if fmt == "github":
        from envcheck.formats.github import render_github

        return render_github(run)
    if fmt == "junit":
        from envcheck.formats.junit import render_junit

        return render_junit(run)
    from envcheck.formats.sarif import render_sarif

    return render_sarif(run)


CI_FORMATS = ("github", "junit", "sarif")
