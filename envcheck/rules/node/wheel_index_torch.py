"""The torch an extension's own wheel index page was for, as a log names the page.

PyG, OpenMMLab, detectron2 and DGL publish one find-links page per torch release and CUDA
(``data.pyg.org/whl/torch-1.9.0+cu111.html``, ``mmcv/dist/cu113/torch1.10.0/index.html``): the
page a log installs an extension from names the torch its wheels were built for. Where that
extension then cannot resolve a torch symbol, the installed torch is another release, and the
two ways out are the installed torch's page or the page's torch (the signature
``extension-wheel-index-named`` reads ``index_torch`` and ``index_cuda``; TOR150 words them).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action
from envcheck.rules.base import LogLine
from envcheck.rules.fixes import manual

# torch's own wheels of releases before 1.13 are installed from torch_stable.html with their
# local tag (pytorch.org's previous-versions page: `pip install torch==1.9.0+cu111 ... -f
# https://download.pytorch.org/whl/torch_stable.html`); later ones from the per-CUDA index
_PER_CUDA_INDEX_FROM = Version("1.13")
_TORCH_STABLE = "https://download.pytorch.org/whl/torch_stable.html"


@dataclass(frozen=True)
class IndexTorch:
    """The torch release (``1.9.0``; PyG's pages name the patch, OpenMMLab's and DGL's the
    minor) and CUDA tag (``cu111``, ``cpu``) of the wheel index page a log names."""

    torch: Version
    cuda_tag: str | None

    @property
    def minor(self) -> str:
        return f"{self.torch.major}.{self.torch.minor}"

    @property
    def text(self) -> str:
        return f"torch {self.torch}" + (f" ({self.cuda_tag})" if self.cuda_tag else "")


def stated_index(line: LogLine) -> IndexTorch | None:
    """The wheel index page's torch the log's lines state, None when none does."""
    value = line.stated.get("index_torch")
    if value is None:
        return None
    try:
        torch = Version(value)
    except InvalidVersion:
        return None
    return IndexTorch(torch, line.stated.get("index_cuda"))


def installed_torch(facts: Facts) -> Version | None:
    with contextlib.suppress(Skip):
        return facts.known_version("torch")
    return None


def installed_cuda_tag(facts: Facts) -> str | None:
    """The installed torch's CUDA as wheel pages spell it (cu102), None when not stated."""
    with contextlib.suppress(Skip):
        cuda = facts.torch_cuda()
        return f"cu{cuda.major}{cuda.minor}" if cuda is not None else None
    return None


def page_is_other_torch(facts: Facts, index: IndexTorch) -> bool:
    """Whether the page's torch can be the one the extension was built against while
    another loads: the installed torch unknown, another major.minor than the page's, or
    another CUDA build (cu111's page under a cu102 torch: pytorch_scatter#211)."""
    installed = installed_torch(facts)
    if installed is None:
        return True
    if (installed.major, installed.minor) != (index.torch.major, index.torch.minor):
        return True
    cuda = installed_cuda_tag(facts)
    return cuda is not None and index.cuda_tag is not None and cuda != index.cuda_tag


def index_cause(dist: str, index: IndexTorch) -> str:
    """The sentence that says which torch the extension's wheels were built for."""
    built = f"torch {index.minor}" + (f" with {index.cuda_tag}" if index.cuda_tag else "")
    return (
        f" ({dist} came from the wheel index page for {index.text}: its wheels are built for "
        f"{built}, and the torch that loads is another release or build)"
    )


def torch_for_index(facts: Facts, index: IndexTorch) -> tuple[str, Action]:
    """The command that installs the page's torch (the other way out), as prose and action."""
    release = str(index.torch)
    if index.torch.release[2:] == ():  # OpenMMLab and DGL name the minor: its first release
        release = f"{index.minor}.0"
    cuda = index.cuda_tag
    if Version(release) < _PER_CUDA_INDEX_FROM:
        local = f"+{cuda}" if cuda else ""
        command = f"pip install torch=={release}{local} -f {_TORCH_STABLE}"
    else:
        url = facts.matrix.torch_index_url(cuda) if cuda else None
        command = f"pip install torch=={release}" + (f" --index-url {url}" if url else "")
    return command, manual(f"{command}  (the torch the index page's wheels were built for)")


def index_fix(facts: Facts, dist: str, index: IndexTorch) -> tuple[str, list[Action]]:
    """The fix's lead when the page's torch is not the installed one: the installed torch's
    page instead (its release read first where the node does not state it), or the page's
    torch."""
    torch_command, torch_action = torch_for_index(facts, index)
    installed = installed_torch(facts)
    which = (
        f"the installed torch {installed}"
        if installed is not None
        else "the installed torch (python -c 'import torch; print(torch.__version__)')"
    )
    lead = (
        f"The index page the log installed {dist} from serves {index.text}, not {which}: "
        f"install {dist} from the page of the installed torch's release and CUDA, or install "
        f"the page's torch, `{torch_command}` (with the torchvision / torchaudio of that "
        "release)"
    )
    if installed is not None:
        return lead, [torch_action]
    ask = manual("python -c 'import torch; print(torch.__version__)'  (the installed torch)")
    return lead, [ask, torch_action]
