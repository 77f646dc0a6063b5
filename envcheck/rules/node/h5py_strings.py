"""PY152: code written for h5py 2 decodes the string attributes h5py 3 returns as str.

h5py 3.0 reads an HDF5 file's variable-length string attributes as ``str`` (h5py 2 returned
``bytes``). Keras 2.x's loaders (keras/engine/saving.py, topology.py) and TensorFlow's tf.keras
copy of them (saving/hdf5_format.py) call ``.decode('utf8')`` on them, so loading a ``.h5``
model or weights file under h5py 3 fails with ``'str' object has no attribute 'decode'``. The
traceback's source line (``f.attrs['keras_version'].decode('utf8')``) and the error under it
state the cause together; the bare error line does not (any code written for Python 2 prints
it), so the signature is the frame's line and this rule requires the error below it.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install

# the package whose frame decodes the attribute, from the frame's path
# (.../site-packages/keras/engine/saving.py -> keras)
_PACKAGE = lazy(r"(?:^|[/\\])(?:site|dist)-packages[/\\]([A-Za-z0-9_]+)[/\\]")
_BARE = lazy(r"^([A-Za-z0-9_]+)[/\\](?:engine|saving)[/\\]")


def _reader(path: str | None) -> str | None:
    """The top-level package of the frame that decodes the attribute (keras, tensorflow_core),
    None when the path does not name one."""
    if not path:
        return None
    found = _PACKAGE.search(path) or _BARE.search(path)
    return found.group(1).removesuffix("_core") if found else None  # tensorflow_core


@rule("PY152", "h5py3-str-attributes", Severity.ERROR)
def h5py3_str_attributes(facts: Facts) -> Iterable[Hit]:
    """Code written for h5py 2 decodes the string attributes that h5py 3 returns as str

    ## What it checks
    A traceback whose frame decodes an HDF5 file's string attribute, as Keras 2.x's model and
    weights loaders do (`original_keras_version = f.attrs['keras_version'].decode('utf8')`,
    `model_config.decode('utf-8')` in keras/engine/saving.py, topology.py or tf.keras's
    hdf5_format.py), or the frame of one of those loaders (load_model_from_hdf5,
    load_weights_from_hdf5_group), followed by `AttributeError: 'str' object has no attribute
    'decode'`; a loader's frame followed by another error rules it out:
    h5py 3.0 reads variable-length string attributes as str, h5py 2 as bytes. The bare error
    line alone is not read as this cause. Only a log states it.

    ## Why it matters
    Nothing in the loader's metadata stops pip from installing h5py 3 beside standalone Keras
    2.x (or an older TensorFlow): every `.h5` model or weights file then fails to load, though
    the file is sound.

    ## Example
    `File ".../site-packages/keras/engine/saving.py", line 1004, in
    load_weights_from_hdf5_group` / `original_keras_version =
    f.attrs['keras_version'].decode('utf8')` / `AttributeError: 'str' object has no attribute
    'decode'`.

    ## Fix
    Install the last h5py 2 release: `pip install "h5py<3"` (2.10.0), or load the file with a
    Keras/TensorFlow release written for h5py 3 (tf.keras of a TensorFlow whose requirements
    allow h5py 3).

    ## References
    - h5py/h5py docs/strings.rst ("Variable-length strings in attributes are read as str
      objects"), docs/whatsnew/3.0.rst
    - keras-team/keras 2.3.1 keras/engine/saving.py
      (`f.attrs['keras_version'].decode('utf8')`)
    - https://github.com/tensorflow/tensorflow/issues/44467
    """
    raise Skip("only a log's traceback states which code decoded the attribute", "log.python")


@from_log("PY152")
def h5py3_str_attributes_in_log(facts: Facts, line: LogLine) -> Hit | None:
    if "str_decoded" not in line.stated:
        if ".decode(" not in line.text:
            return None  # a loader's frame followed by another error: not this cause
        raise NotStated(
            f"line {line.line} decodes an HDF5 attribute, but no `'str' object has no "
            "attribute 'decode'` follows it",
            "log.python",
        )
    reader = _reader(line.stated.get("hdf5_reader_file"))
    installed = facts.known_version("h5py")
    if installed is not None and installed < Version("3"):
        return None  # h5py 2 returns bytes: another str was decoded
    have = f"h5py {installed}" if installed is not None else "the installed h5py (3.x)"
    who = f"{reader}'s" if reader else "the loader's"
    return Hit(
        f"{who} code decodes an HDF5 file's string attribute as bytes (line {line.line}), and "
        f"{have} returns it as str: h5py 3.0 reads string attributes as str; that code was "
        "written for h5py 2",
        evidence={
            "line": line.line,
            "reader": reader,
            "file": line.stated.get("hdf5_reader_file"),
            "h5py": str(installed) if installed is not None else None,
        },
        fix=fix(
            'Install the last h5py 2 release: pip install "h5py<3" (h5py==2.10.0), or load the '
            f"file with a {reader or 'Keras'} release written for h5py 3 (tf.keras of a "
            "TensorFlow release whose requirements allow h5py 3)",
            "unsafe",
            pip_install("h5py<3"),
            manual("pip install h5py==2.10.0  (the last 2.x release)"),
        ),
    )
