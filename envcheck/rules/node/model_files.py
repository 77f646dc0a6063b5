"""A model or data file that is not what its loader expects (matrices/signatures/
model_files.toml): a Git LFS pointer left by a clone without Git LFS, an HTML page saved in the
file's place, or a download cut short. Only a log states it; the loader's own words show which
form the file has, and the fix follows the form."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# pickle's first byte 'v' ('version https://git-lfs...'), torch's weights-only unpickler's
# 118; safetensors' header length read from text; h5py and numpy finding no format at all
_LFS_POINTER = lazy(
    r"invalid load key, 'v'|Unsupported operand 118|HeaderTooLarge|header too large"
)
_HTML_PAGE = lazy(r"invalid load key, '<'|Unsupported operand 60")
_CUT_SHORT = lazy(r"failed finding central directory|MetadataIncompleteBuffer")

LOOK = "head -c 200 FILE; ls -l FILE  (what the file really is, and its size)"


@rule("SYS244", "model-file-not-the-download", Severity.WARNING)
def model_file_not_the_download(facts: Facts) -> Iterable[Hit]:
    """A model file is not the model: a Git LFS pointer, an HTML page or a download cut short

    ## What it checks
    Only a log states it, in the loader's own words: pickle's `invalid load key, 'v'` (torch's
    weights-only `Unsupported operand 118`), `invalid load key, '<'`, torch's `PytorchStreamReader
    failed reading zip archive: failed finding central directory`, safetensors' `Error while
    deserializing header: HeaderTooLarge` / `MetadataIncompleteBuffer`, h5py's `file signature
    not found`, numpy's `Failed to interpret file ... as a pickle`.

    ## Why it matters
    A repository that keeps its weights in Git LFS, cloned where Git LFS is not installed,
    holds ~130-byte text pointers (`version https://git-lfs.github.com/spec/v1`) under the
    weights' names; a URL that answers with a login, quota or redirect page saves HTML; an
    interrupted download leaves a file without its end. Every loader then fails on the first
    bytes, with an error about its format, not about the file.

    ## Example
    `git clone` of a model repository without Git LFS, then `torch.load('ckpt/model.pth')`:
    `_pickle.UnpicklingError: invalid load key, 'v'.`

    ## Fix
    A pointer: `git lfs install`, then `git lfs pull` in the clone (or clone again); a cut-short
    file: delete it and download it again, checking its size or sha256 against the source; an
    HTML page: download it with the access the site needs (a token, the direct link).
    `head -c 200 FILE` shows which it is.

    ## References
    - https://github.com/git-lfs/git-lfs/issues/4366
    - https://github.com/hhj1897/face_parsing/issues/3
    - https://github.com/microsoft/OmniParser/issues/34
    - https://github.com/CompVis/stable-diffusion/issues/93
    """
    raise Skip("only a log states what a model file really holds", "log.model_file")


def _pointer_fix() -> Fix:
    return fix(
        "The file is a Git LFS pointer (a text stub), not the weights: install Git LFS and "
        "fetch the real files in the clone (git lfs install && git lfs pull), or clone again "
        "after git lfs install",
        "manual",
        manual("git lfs install"),
        manual("git lfs pull  (in the repository's clone; git lfs ls-files lists the files)"),
        manual(LOOK),
    )


def _cut_short_fix() -> Fix:
    return fix(
        "The file was cut short (an interrupted download or copy): delete it and download it "
        "again, then compare its size or sha256sum with the source's",
        "manual",
        manual(
            "rm FILE, then download the file again (a hub cache: its download command "
            "with --force-download)"
        ),
        manual("sha256sum FILE  (against the checksum the source publishes)"),
        manual(LOOK),
    )


def _html_fix() -> Fix:
    return fix(
        "The file is an HTML page (a login, quota or redirect page saved in its place): "
        "download it again from the direct link with the access the site needs (a token)",
        "manual",
        manual(LOOK),
    )


def _any_fix() -> Fix:
    return fix(
        "The file is not in the loader's format: a Git LFS pointer (git lfs install && git "
        "lfs pull), an HTML page, or a download cut short (download it again); look first",
        "manual",
        manual(LOOK),
        manual("git lfs install && git lfs pull  (a pointer: 'version https://git-lfs')"),
    )


@from_log("SYS244")
def model_file_not_the_download_in_log(facts: Facts, line: LogLine) -> Hit:
    """The form the loader's words show decides the fix: a pointer, an HTML page, a file cut
    short; a line that shows none of them lists all three, the look first."""
    text = line.text
    if _LFS_POINTER.search(text):
        what, chosen = "a Git LFS pointer left by a clone without Git LFS", _pointer_fix()
    elif _HTML_PAGE.search(text):
        what, chosen = "an HTML page saved in the file's place", _html_fix()
    elif _CUT_SHORT.search(text):
        what, chosen = "a file cut short (an interrupted download or copy)", _cut_short_fix()
    else:
        what, chosen = "not a file of the loader's format", _any_fix()
    return Hit(
        f"the model file the loader read is {what} (line {line.line})",
        evidence={"line": line.line},
        fix=chosen,
        severity=Severity.ERROR,
    )
