"""The python family's conditions as the interpreters, pip, uv, conda and the libraries word
them (round 20's phrasing battery): each line is the same condition a python signature names,
in the wording of another CPython release (3.8 to 3.13: "partially initialized module ... from",
"consider renaming", "cannot access submodule", "Did you mean"), of an installer (pip's
resolver, uv's "we can conclude", pip's Requires-Python refusals) or of the library that
removed the name (NumPy's expired aliases, pydantic 2's moves, protobuf 4's descriptors).
Each row: the log, the source that prints or documents the wording, the code that names the
cause and, where the wording or the library's release notes decide it, a substring of the fix.
Every row must name its cause *confirmed*: the line itself states the condition."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

SITE = "/opt/venv/lib/python3.11/site-packages"
TB = "Traceback (most recent call last):"

# (id, lines, source, code, fix substring or "")
BATTERY: list[tuple[str, tuple[str, ...], str, str, str]] = [
    # -- CPython's own import wordings, release by release ------------------------------------
    (
        "py313-stdlib-shadowed",
        (
            TB,
            '  File "/home/me/random.py", line 3, in <module>',
            "AttributeError: module 'random' has no attribute 'randint' (consider renaming "
            "'/home/me/random.py' since it has the same name as the standard library module "
            "named 'random' and prevents importing that standard library module)",
        ),
        "python/cpython v3.13.0 Objects/moduleobject.c (_Py_module_getattro_impl); "
        "https://docs.python.org/3.13/whatsnew/3.13.html#improved-error-messages",
        "PY150",
        "/home/me/random.py",
    ),
    (
        "py313-library-shadowed",
        (
            TB,
            '  File "/home/me/numpy.py", line 3, in <module>',
            "AttributeError: module 'numpy' has no attribute 'array' (consider renaming "
            "'/home/me/numpy.py' if it has the same name as a library you intended to import)",
        ),
        "python/cpython v3.13.0 Objects/moduleobject.c; whatsnew 3.13 (gh-95754)",
        "PY150",
        "/home/me/numpy.py",
    ),
    (
        "py313-import-from-shadowed",
        (
            "ImportError: cannot import name 'Presentation' from 'pptx' (consider renaming "
            "'/home/me/work/pptx.py' if it has the same name as a library you intended to import)",
        ),
        "python/cpython v3.13.0 Python/ceval.c (_PyEval_ImportFrom: 'cannot import name %R from "
        "%R (consider renaming %R if it has the same name as a library you intended to import)')",
        "PY150",
        "/home/me/work/pptx.py",
    ),
    (
        "py313-partially-initialized-from",
        (
            "AttributeError: partially initialized module 'torch' from '/home/me/torch.py' has "
            "no attribute 'Tensor' (most likely due to a circular import)",
        ),
        "python/cpython v3.13.0 Objects/moduleobject.c (\"partially initialized module '%U' "
        "from '%U' has no attribute '%U' (most likely due to a circular import)\")",
        "PY150",
        "/home/me/torch.py",
    ),
    (
        "py38-partially-initialized",
        (
            "AttributeError: partially initialized module 'pandas' has no attribute 'DataFrame' "
            "(most likely due to a circular import)",
        ),
        "python/cpython v3.8.0 Objects/moduleobject.c (module_getattro)",
        "PY150",
        "Rename a local pandas.py",
    ),
    (
        "py313-submodule-circular",
        (
            "AttributeError: cannot access submodule 'utils' of module 'mypkg' (most likely due "
            "to a circular import)",
        ),
        "python/cpython v3.13.0 Objects/moduleobject.c (\"cannot access submodule '%U' of "
        "module '%U' (most likely due to a circular import)\")",
        "PY150",
        "circular import",
    ),
    (
        "py38-import-from-partially-initialized",
        (
            "ImportError: cannot import name 'Tensor' from partially initialized module 'torch' "
            "(most likely due to a circular import) (/home/me/torch/__init__.py)",
        ),
        "python/cpython v3.8.0 Python/ceval.c (import_from)",
        "PY150",
        "Rename a local torch.py",
    ),
    (
        "py312-import-did-you-mean",
        (
            f"ImportError: cannot import name 'GRPOConfig' from 'trl' ({SITE}/trl/__init__.py). "
            "Did you mean: 'PPOConfig'?",
        ),
        "python/cpython v3.12.0 whatsnew ('Improved Error Messages': suggestions for "
        "ImportError from ... import)",
        "PY150",
        "trl",
    ),
    (
        "py37-import-bare-module",
        ("ImportError: cannot import name 'GRPOConfig'",),
        "python/cpython v3.7 Python/ceval.c (import_from: 'cannot import name %R')",
        "PY150",
        "",
    ),
    (
        "unknown-location",
        ("ImportError: cannot import name 'ops' from 'vllm' (unknown location)",),
        "python/cpython Python/ceval.c (import_from: pkgpath '<unknown location>')",
        "PY150",
        "",
    ),
    (
        "py313-keyword-did-you-mean",
        (
            "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'. "
            "Did you mean 'callbacks'?",
        ),
        "python/cpython v3.13.0 whatsnew (gh-107944: the keyword suggestion); "
        "huggingface/trl v0.16.0 (tokenizer removed for processing_class)",
        "PY160",
        "processing_class",
    ),
    (
        "py39-keyword-bare-init",
        (
            TB,
            '  File "/home/me/train.py", line 40, in <module>',
            "    trainer = SFTTrainer(model=model, tokenizer=tokenizer, args=args)",
            "TypeError: __init__() got an unexpected keyword argument 'tokenizer'",
        ),
        "python/cpython v3.9 Python/getargs.c (a bare __init__ before 3.10's qualified names)",
        "PY160",
        "processing_class",
    ),
    (
        "py310-attribute-did-you-mean",
        ("AttributeError: module 'numpy' has no attribute 'float'. Did you mean: 'cfloat'?",),
        "python/cpython v3.10.0 whatsnew (AttributeError suggestions); "
        "https://github.com/forlilab/cosolvkit/issues/1 (numpy 1.24.1; numpy 1.21.6 works)",
        "PY150",
        "numpy<1.24",
    ),
    (
        "py312-import-did-you-mean-path",
        (
            "ImportError: cannot import name 'url_quote' from 'werkzeug.urls' "
            "(/usr/local/lib/python3.12/site-packages/werkzeug/urls.py). Did you mean: 'unquote'?",
        ),
        "https://github.com/solo-io/envoy-workshop-basics/pull/17 (the 3.12 form verbatim); "
        "pallets/werkzeug CHANGES.rst 3.0.0",
        "PY150",
        "werkzeug<3",
    ),
    (
        "pytest-cut-module-quote",
        (
            ".venv/lib/python3.11/site-packages/gensim/matutils.py:20: in <module>",
            "    from scipy.linalg import get_blas_funcs, triu",
            "E   ImportError: cannot import name 'triu' from 'scipy.linalg",
        ),
        "https://github.com/piskvorky/gensim/issues/3525 (pytest's `E   ` form, the closing "
        "quote lost); scipy 1.13.0 release notes (scipy.linalg.triu removed)",
        "PY150",
        "scipy<1.13",
    ),
    # -- names a release removed, in the library's own words -----------------------------------
    (
        "numpy124-former-alias",
        (
            "AttributeError: module 'numpy' has no attribute 'float'.",
            "`np.float` was a deprecated alias for the builtin `float`. To avoid this error in "
            "existing code, use `float` by itself. Doing this will not modify any behavior and "
            "is safe. If you specifically wanted the numpy scalar type, use `np.float64` here.",
            "The aliases was originally deprecated in NumPy 1.20; for more details and guidance "
            "see the original release note at:",
            "    https://numpy.org/devdocs/release/1.20.0-notes.html#deprecations",
        ),
        "numpy/numpy v1.24.0 numpy/__init__.py (__former_attrs__, __getattr__); "
        "doc/source/release/1.24.0-notes.rst (expired deprecations)",
        "PY150",
        "numpy<1.24",
    ),
    (
        "numpy124-bool",
        ("AttributeError: module 'numpy' has no attribute 'bool'.",),
        "numpy/numpy v1.24.0 release notes (np.bool ... removed)",
        "PY150",
        "numpy<1.24",
    ),
    (
        "numpy2-expired",
        (
            "AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` "
            "instead.",
        ),
        "numpy/numpy v2.0.0 numpy/_expired_attrs_2_0.py",
        "PY150",
        "numpy<2",
    ),
    (
        "markupsafe-soft-unicode",
        (
            f"ImportError: cannot import name 'soft_unicode' from 'markupsafe' "
            f"({SITE}/markupsafe/__init__.py)",
        ),
        "pallets/markupsafe CHANGES.rst 2.1.0 ('Remove soft_unicode, which was previously "
        "deprecated')",
        "PY150",
        "markupsafe<2.1",
    ),
    (
        "jinja2-escape",
        (f"ImportError: cannot import name 'escape' from 'jinja2' ({SITE}/jinja2/__init__.py)",),
        "pallets/jinja CHANGES.rst 3.1.0 ('Remove previously deprecated code ... Markup and "
        "escape should be imported from MarkupSafe')",
        "PY150",
        "jinja2<3.1",
    ),
    (
        "werkzeug-url-quote",
        (
            "ImportError: cannot import name 'url_quote' from 'werkzeug.urls' "
            f"({SITE}/werkzeug/urls.py)",
        ),
        "pallets/werkzeug CHANGES.rst 3.0.0 ('Remove previously deprecated code', the "
        "werkzeug.urls functions)",
        "PY150",
        "werkzeug<3",
    ),
    (
        "hub-cached-download",
        (
            "ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
            f"({SITE}/huggingface_hub/__init__.py)",
        ),
        "huggingface/huggingface_hub v0.26.0 release notes (cached_download removed)",
        "PY150",
        "huggingface_hub<0.26",
    ),
    (
        "pkg-resources-packaging",
        (
            "ImportError: cannot import name 'packaging' from 'pkg_resources' "
            f"({SITE}/pkg_resources/__init__.py)",
        ),
        "pypa/setuptools v70.0.0 NEWS.rst (pkg_resources no longer exposes the vendored "
        "packaging); https://github.com/pytorch/pytorch/issues/128302",
        "PY150",
        "setuptools<70",
    ),
    (
        "collections-abc-py310",
        (
            "ImportError: cannot import name 'Mapping' from 'collections' "
            "(/usr/lib/python3.10/collections/__init__.py)",
        ),
        "python/cpython v3.10.0 whatsnew (the ABC aliases in collections removed; bpo-37324)",
        "PY150",
        "",
    ),
    (
        "pydantic-basesettings",
        (
            "pydantic.errors.PydanticImportError: `BaseSettings` has been moved to the "
            "`pydantic-settings` package. See "
            "https://docs.pydantic.dev/2.5/migration/#basesettings-has-moved-to-pydantic-settings "
            "for more details.",
        ),
        "pydantic/pydantic v2.0 pydantic/_migration.py (MOVED_IN_V2 / REMOVED_IN_V2)",
        "PY150",
        "pydantic<2",
    ),
    (
        "protobuf4-descriptors",
        (
            "TypeError: Descriptors cannot be created directly.",
            "If this call came from a _pb2.py file, your generated code is out of date and must "
            "be regenerated with protoc >= 3.19.0.",
            "If you cannot immediately regenerate your protos, some other possible workarounds "
            "are:",
            " 1. Downgrade the protobuf package to 3.20.x or lower.",
            " 2. Set PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python (but this will use pure-Python "
            "parsing and will be much slower).",
        ),
        "protocolbuffers/protobuf v4.21.0 python/google/protobuf/descriptor.py "
        "(_Deprecated / 'Descriptors cannot be created directly')",
        "PKG191",
        "protobuf",
    ),
    # -- modules a Python release removed ------------------------------------------------------
    (
        "py312-pkgutil-impimporter",
        (
            "AttributeError: module 'pkgutil' has no attribute 'ImpImporter'. Did you mean: 'zipimporter'?",
        ),
        "python/cpython v3.12.0 whatsnew (pkgutil.ImpImporter removed with imp); "
        "https://github.com/ISA-tools/isa-api/issues/581 (the line verbatim)",
        "PY150",
        "setuptools",
    ),
    (
        "py310-collections-abc-attribute",
        ("AttributeError: module 'collections' has no attribute 'MutableMapping'",),
        "python/cpython v3.10.0 whatsnew (bpo-37324: the ABC aliases removed from collections)",
        "PY150",
        "collections.abc.MutableMapping",
    ),
    (
        "typing-extensions-added-name",
        (
            "ImportError: cannot import name 'TypeIs' from 'typing_extensions' "
            "(/usr/lib/python3/dist-packages/typing_extensions.py)",
        ),
        "python/typing_extensions CHANGELOG.md 4.10.0 (TypeIs added, PEP 742)",
        "PY150",
        "typing_extensions>=4.10",
    ),
    (
        "py312-asynchat",
        ("ModuleNotFoundError: No module named 'asynchat'",),
        "python/cpython v3.12.0 whatsnew (asynchat and asyncore removed, PEP 594)",
        "PY151",
        "pyasynchat",
    ),
    (
        "pkg-resources-absent",
        ("ModuleNotFoundError: No module named 'pkg_resources'",),
        "python/cpython v3.12.0 whatsnew (venv no longer installs setuptools); pypa/setuptools "
        "NEWS.rst (pkg_resources)",
        "PY151",
        "pip install setuptools",
    ),
    (
        "transformers-check-imports",
        (
            "ImportError: This modeling file requires the following packages that were not found "
            "in your environment: flash_attn. Run `pip install flash_attn`",
        ),
        "huggingface/transformers src/transformers/dynamic_module_utils.py (check_imports)",
        "PY151",
        "flash_attn",
    ),
    (
        "importlib-metadata-not-found",
        (
            "importlib.metadata.PackageNotFoundError: No package metadata was found for bitsandbytes",
        ),
        "python/cpython Lib/importlib/metadata/__init__.py (PackageNotFoundError: 'No package "
        "metadata was found for {name}')",
        "PY151",
        "pip install bitsandbytes",
    ),
    (
        "py312-distutils",
        ("ModuleNotFoundError: No module named 'distutils'",),
        "python/cpython v3.12.0 whatsnew (PEP 632: distutils removed; setuptools provides it)",
        "PY151",
        "setuptools",
    ),
    (
        "py312-imp",
        ("ModuleNotFoundError: No module named 'imp'",),
        "python/cpython v3.12.0 whatsnew (imp removed)",
        "PY151",
        "",
    ),
    (
        "py2-bare-no-module",
        ("ImportError: No module named yaml",),
        "python/cpython 2.7 Python/import.c ('No module named %.200s')",
        "PY151",
        "pyyaml",
    ),
    (
        "no-module-not-a-package",
        ("ModuleNotFoundError: No module named 'torch._six'",),
        "python/cpython Lib/importlib/_bootstrap.py; pytorch/pytorch v2.0.0 (torch/_six.py "
        "removed)",
        "PY151",
        "",
    ),
    # -- installers -------------------------------------------------------------------------------
    (
        "pip-requires-different-python",
        ("ERROR: Package 'trl' requires a different Python: 3.8.17 not in '>=3.9'",),
        "pypa/pip src/pip/_internal/resolution/resolvelib/factory.py "
        "(_report_single_requires_python... 'requires a different Python: {} not in {!r}')",
        "PY140",
        "",
    ),
    (
        "pip-ignored-versions",
        (
            "ERROR: Ignored the following versions that require a different python version: "
            "0.14.0 Requires-Python >=3.9; 0.15.0 Requires-Python >=3.9",
            "ERROR: Could not find a version that satisfies the requirement trl==0.14.0 (from "
            "versions: 0.11.4, 0.12.0)",
            "ERROR: No matching distribution found for trl==0.14.0",
        ),
        "pypa/pip src/pip/_internal/index/package_finder.py ('Ignored the following versions "
        "that require a different python version')",
        "PY140",
        "",
    ),
    (
        "uv-current-python",
        (
            "  × No solution found when resolving dependencies:",
            "  ╰─▶ Because the current Python version (3.8.18) does not satisfy Python>=3.9 and "
            "trl==0.14.0 depends on Python>=3.9, we can conclude that trl==0.14.0 cannot be used.",
            "      And because you require trl==0.14.0, we can conclude that your requirements "
            "are unsatisfiable.",
        ),
        "astral-sh/uv crates/uv-resolver/src/pubgrub/report.rs (PythonRequirement: 'the "
        "current Python version ({}) does not satisfy')",
        "PY140",
        "",
    ),
    (
        "uv-requested-python",
        (
            "  × No solution found when resolving dependencies:",
            "  ╰─▶ Because the requested Python version (>=3.8) does not satisfy Python>=3.9 and "
            "trl==0.14.0 depends on Python>=3.9, we can conclude that trl==0.14.0 cannot be used.",
        ),
        "astral-sh/uv crates/uv-resolver/src/pubgrub/report.rs ('the requested Python version')",
        "PY140",
        "",
    ),
    (
        "uv-project-requires-python",
        (
            "  ╰─▶ Because the requested Python version (>=3.8) does not satisfy",
            "      Python>=3.10 and your project depends on mcp[cli], we can conclude that",
            "      your project's requirements are unsatisfiable.",
        ),
        "https://github.com/astral-sh/uv/issues/12771 (the maintainer: edit the project's "
        "requires-python)",
        "PY140",
        "requires-python",
    ),
    (
        "pip-distutils-installed-legacy",
        (
            "  Attempting uninstall: PyYAML",
            "    Found existing installation: PyYAML 5.3.1",
            "ERROR: Cannot uninstall 'PyYAML'. It is a distutils installed project and thus we "
            "cannot accurately determine which files belong to it which would lead to only a "
            "partial uninstall.",
        ),
        "pypa/pip 10-23.0 src/pip/_internal/req/req_uninstall.py; "
        "https://github.com/neka-nat/kinpy/issues/8 (--ignore-installed PyYAML)",
        "PY180",
        "pip install --ignore-installed PyYAML",
    ),
    (
        "pip-distutils-installed-diagnostic",
        (
            "error: uninstall-distutils-installed-package",
            "",
            "× Cannot uninstall blinker 1.4",
            "╰─> It is a distutils installed project and thus we cannot accurately determine "
            "which files belong to it which would lead to only a partial uninstall.",
        ),
        "pypa/pip src/pip/_internal/exceptions.py (LegacyDistutilsInstall)",
        "PY180",
        "pip install --ignore-installed blinker",
    ),
    (
        "pip-no-record-file",
        (
            "error: uninstall-no-record-file",
            "",
            "× Cannot uninstall requests 2.32.3",
            "╰─> The package's contents are unknown: no RECORD file was found for requests.",
            "",
            "hint: The package was installed by debian. You should check if it can uninstall "
            "the package.",
        ),
        "pypa/pip src/pip/_internal/exceptions.py (UninstallMissingRecord)",
        "PY180",
        "python3 -m venv",
    ),
    (
        "pip-already-satisfied-other-interpreter",
        (
            "$ pip install torch",
            "Requirement already satisfied: torch in /usr/local/lib/python3.10/dist-packages "
            "(2.1.0)",
            "$ python train.py",
            TB,
            '  File "/home/me/train.py", line 1, in <module>',
            "    import torch",
            "ModuleNotFoundError: No module named 'torch'",
        ),
        "pypa/pip src/pip/_internal/resolution/resolvelib/... ('Requirement already "
        "satisfied'); https://packaging.python.org/en/latest/tutorials/installing-packages/ "
        "(python -m pip)",
        "PY151",
        "python -m pip",
    ),
]


@pytest.mark.parametrize(
    ("lines", "code", "fix"),
    [pytest.param(lines, code, fix, id=key) for key, lines, _src, code, fix in BATTERY],
)
def test_wording_names_the_cause(
    tmp_path: Path, cli: Callable[..., CliResult], lines: tuple[str, ...], code: str, fix: str
) -> None:
    found = causes(cli, log_file(tmp_path, *lines))
    assert code in found, sorted(found)
    cause = found[code]
    assert cause["verdict"] == "confirmed"
    if fix:
        assert fix.lower() in fix_text(cause).lower()


def test_pip_verbose_link_refusal_is_not_a_failure(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """pip -v logs every link it skips for Requires-Python (package_finder.py,
    _check_link_requires_python: 'Link requires a different Python ({} not in: {!r})') even when
    it then installs a release that accepts the interpreter: alone it is not a failure."""
    log = log_file(
        tmp_path,
        "  Link requires a different Python (3.13.1 not in: '<3.13,>=3.9'): "
        "https://example.invalid/quspin_extensions-0.1.3.tar.gz (requires-python:<3.13,>=3.9)",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode == 0, result.stdout
    assert result.json()["data"]["matches"] == []


def test_battery_rows_cite_a_source() -> None:
    keys = [row[0] for row in BATTERY]
    assert len(keys) == len(set(keys))
    assert all(row[2] for row in BATTERY)
