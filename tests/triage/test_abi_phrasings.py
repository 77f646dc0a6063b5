"""The ABI family's lines in the wordings its sources print (round 20's phrasing battery).

Each entry is one condition (a compiled extension, program or library that does not resolve a
symbol of the library it was built against) as a loader, an interpreter or a runtime words it:
glibc's dynamic loader (through Python's ImportError, ctypes' OSError, torch.ops.load_library,
torch's DynamicLibrary in a C++ program, a program's own `symbol lookup error`), macOS' dyld in
its three forms (`Symbol not found: __Z...`, macOS 12's parenthesised `Symbol not found:
(__Z...)` with quoted paths, and `symbol not found in flat namespace '__Z...'`), Windows' loader
through CPython (`DLL load failed while importing X`, Python 3.7's `DLL load failed:`) and the
owners' own messages. The expected cause is the one the line establishes by itself: it must be
*confirmed* from the log alone, and no other cause may be confirmed beside it (another
package's pairing named for a line that does not name that package is the "matched, other
causes named" failure this battery guards against)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.commands.triage import triage_log

# (id, log text, source of the wording, the cause the line establishes)
LINES: list[tuple[str, str, str, str]] = [
    (
        "python-importerror-site-packages",
        "ImportError: /opt/conda/lib/python3.8/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu"
        ".so: undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12"
        "MemoryFormatE",
        "https://github.com/open-mmlab/mmcv/issues/2106 ; bminor/glibc elf/dl-lookup.c",
        "TOR150",
    ),
    (
        "ctypes-oserror-load-library",
        "OSError: /usr/local/lib/python3.8/dist-packages/torch_scatter/_version_cuda.so: undefined "
        "symbol: _ZN5torch3jit17parseSchemaOrNameERKSs",
        "https://github.com/rusty1s/pytorch_scatter/issues/264 (torch.ops.load_library -> ctypes.CDLL)",
        "TOR150",
    ),
    (
        "program-symbol-lookup-error",
        "python: symbol lookup error: /opt/venv/lib/python3.10/site-packages/mmcv/_ext.cpython-310-"
        "x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
        "bminor/glibc elf/dl-lookup.c (_dl_signal_error(..., 'symbol lookup error'))",
        "TOR150",
    ),
    (
        "cxx-program-symbol-lookup-error",
        "./example-app: symbol lookup error: ./example-app: undefined symbol: _ZN2at4_ops5randn4call"
        "EN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_INS2_"
        "6DeviceEEENS6_IbEE",
        "https://github.com/pytorch/pytorch/issues/97878 (a libtorch C++ program run against another "
        "libtorch)",
        "TOR150",
    ),
    (
        "cxx-program-binary-other-symbol",
        "syntaxdot: symbol lookup error: syntaxdot: undefined symbol: _ZN2at3mulERKNS_6TensorERKN3c10"
        "6ScalarE",
        "https://github.com/tensordot/syntaxdot/issues/220 (libtorch of the other C++ ABI)",
        "TOR150",
    ),
    (
        "torch-dynamic-library-dlopen",
        "  what():  Error in dlopen: /tmp/example/model.so: undefined symbol: _ZN3c107WarningC1ESt7"
        "variantIJNS0_11UserWarningENS0_18DeprecationWarningEEERKNS_14SourceLocationESsb",
        "https://github.com/pytorch/pytorch/issues/122313 ; pytorch aten/src/ATen/DynamicLibrary.cpp "
        "('Error in dlopen: ', dlerror())",
        "TOR150",
    ),
    (
        "torch-dynamic-library-site-packages",
        "RuntimeError: Error in dlopen: /home/u/venv/lib/python3.10/site-packages/torch_tensorrt/lib/"
        "libtorchtrt.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs",
        "pytorch aten/src/ATen/DynamicLibrary.cpp ('Error in dlopen: ')",
        "TOR150",
    ),
    (
        "no-path-extension-line",
        "Error loading extension: undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_"
        "policy_implENS_12MemoryFormatE",
        "bminor/glibc elf/dl-lookup.c (the loader's message without the object, as wrappers print "
        "dlerror()'s tail)",
        "TOR150",
    ),
    (
        "symbol-cut-at-line-end",
        "ImportError: /home/u/venv/lib/python3.10/site-packages/torch_sparse/_convert_cpu.so: "
        "undefined symbol: _ZN3c10",
        "https://github.com/rusty1s/pytorch_scatter/issues/248 (a terminal's cut)",
        "TOR150",
    ),
    (
        "relative-package-path",
        "lmcache/c_ops.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c105ErrorC2ENS_14"
        "SourceLocationESs",
        "https://github.com/LMCache/LMCache/issues/1294",
        "TOR150",
    ),
    (
        "source-tree-extension",
        "ImportError: /home/xxx/workspace/AlphaPose-master/detector/nms/nms_cpu.cpython-38-x86_64-"
        "linux-gnu.so: undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_impl"
        "ENS_12MemoryFormatE",
        "https://github.com/MVIG-SJTU/AlphaPose/issues/1132",
        "TOR150",
    ),
    (
        "torch-own-library-two-releases",
        "ImportError: /home/c/anaconda3/envs/m/lib/python3.7/site-packages/torch/lib/libtorch.so.1: "
        "undefined symbol: _ZTIN2at10TensorImplE",
        "https://github.com/pytorch/pytorch/issues/13893",
        "TOR150",
    ),
    (
        "tensorflow-custom-op",
        "tensorflow.python.framework.errors_impl.NotFoundError: /home/u/venv/lib/python3.10/site-"
        "packages/tensorflow_addons/custom_ops/image/_image_ops.so: undefined symbol: _ZN10"
        "tensorflow12OpDefBuilder4AttrENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
        "tensorflow/tensorflow tensorflow/python/framework/load_library.py (load_op_library -> "
        "NotFoundError with the loader's message)",
        "TOR150",
    ),
    (
        "macos-dyld-classic",
        "ImportError: dlopen(/Users/u/venv/lib/python3.9/site-packages/torch_sparse/_version_cpu.so,"
        " 2): Symbol not found: __ZN3c1017RegisterOperatorsD1Ev\n"
        "  Referenced from: /Users/u/venv/lib/python3.9/site-packages/torch_sparse/_version_cpu.so\n"
        "  Expected in: /Users/u/venv/lib/python3.9/site-packages/torch/lib/libc10.dylib\n",
        "https://github.com/rusty1s/pytorch_sparse/issues/180 ; apple-oss-distributions/dyld",
        "TOR150",
    ),
    (
        "macos-12-parenthesised",
        "ImportError: dlopen(/Users/u/venv/lib/python3.11/site-packages/torch_scatter/_scatter_cpu.so,"
        " 0x0002): Symbol not found: (__ZN2at14RecordFunctionC1ENS_11RecordScopeEb)\n"
        "  Referenced from: '/Users/u/venv/lib/python3.11/site-packages/torch_scatter/_scatter_cpu.so'"
        "\n  Expected in: '/Users/u/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.dylib'\n",
        "apple-oss-distributions/dyld (macOS 12: 'Symbol not found: (%s)', quoted paths), as "
        "mlverse/torchvisionlib's check log prints it for libtorchvision.dylib",
        "TOR150",
    ),
    (
        "macos-dyld4-uuid-referenced-from",
        "dyld[123]: Symbol not found: __ZN2at4_ops5empty4callEN3c108ArrayRefIxEE\n"
        "  Referenced from: <6B8AC17B-04CC-36D0-BD01-780381EFB0CC> /Users/u/proj/build/libmyext."
        "dylib\n"
        "  Expected in:     <0E7C7F4A-1B2C-3D4E-5F60-718293A4B5C6> /Users/u/venv/lib/python3.11/site-"
        "packages/torch/lib/libtorch_cpu.dylib\n",
        "apple-oss-distributions/dyld (dyld4: 'Referenced from: <UUID> path') ; "
        "https://github.com/jank-lang/jank/issues/379",
        "TOR150",
    ),
    (
        "macos-flat-namespace",
        "ImportError: dlopen(/Users/u/venv/lib/python3.11/site-packages/torch_cluster/_grid_cpu.so,"
        " 0x0002): symbol not found in flat namespace '__ZN3c1017RegisterOperatorsD1Ev'",
        "apple-oss-distributions/dyld (\"symbol not found in flat namespace '%s'\"), as plyvel's "
        "and atheris' notes quote it",
        "TOR150",
    ),
    (
        "windows-while-importing",
        "ImportError: DLL load failed while importing _C: The specified procedure could not be found.",
        "https://github.com/facebookresearch/pytorch3d/issues/1872 ; CPython Python/dynload_win.c",
        "TOR150",
    ),
    (
        "windows-python37-form",
        "ImportError: DLL load failed: The specified procedure could not be found.",
        "CPython 3.7 Python/dynload_win.c ('DLL load failed: ' + FormatMessage, before 3.8 "
        "added 'while importing %s') ; https://github.com/pytorch/pytorch/issues/574",
        "TOR150",
    ),
    (
        "flash-attn-extension",
        "ImportError: /opt/conda/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-"
        "linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
        "https://github.com/Dao-AILab/flash-attention/issues/853",
        "TOR103",
    ),
    (
        "companion-extension",
        "OSError: /opt/venv/lib/python3.10/site-packages/torchaudio/lib/libtorchaudio.so: undefined "
        "symbol: _ZNK5torch8autograd4Node4nameB5cxx11Ev",
        "https://github.com/pytorch/audio/issues (torchaudio's extension under another torch)",
        "TOR104",
    ),
    (
        "vllm-extension",
        "ImportError: /home/u/venv/lib/python3.10/site-packages/vllm/_C.abi3.so: undefined symbol: "
        "_ZN3c106ivalue14ConstantString6createENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
        "https://github.com/vllm-project/vllm/issues/5501",
        "VLM101",
    ),
    (
        "sgl-kernel-extension",
        "ImportError: /usr/local/lib/python3.10/dist-packages/sgl_kernel/common_ops.abi3.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEa",
        "https://github.com/sgl-project/sglang/issues/5100",
        "TOR120",
    ),
    (
        "windows-zh-cn",
        "ImportError: DLL load failed while importing _C: 找不到指定的程序。",
        "CPython Python/dynload_win.c (FormatMessageW in the system's language) ; "
        "https://github.com/smthemex/ComfyUI_TRELLIS/issues/27",
        "TOR150",
    ),
    (
        "companion-op-cuda-backend",
        "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' "
        "backend. This could be because the operator doesn't exist for this backend",
        "pytorch aten/src/ATen/core/dispatch/OperatorEntry.cpp (reportError) ; "
        "https://github.com/ltdrdata/ComfyUI-Impact-Pack/issues/915",
        "TOR104",
    ),
    (
        "torchvision-operator",
        "RuntimeError: operator torchvision::nms does not exist",
        "pytorch/vision torchvision/_meta_registrations.py",
        "TOR104",
    ),
]


def confirmed(log: Path) -> set[str]:
    """The causes ``log`` confirms from its lines alone (no node): read as a file, as users
    pass logs (the lines after a match, dyld's `Referenced from:`, are read from it)."""
    result = triage_log(str(log))
    return {c.code for m in result.failures for c in m.causes if c.verdict == "confirmed"}


@pytest.mark.parametrize(
    ("text", "expected"), [(t, e) for _, t, _, e in LINES], ids=[i for i, *_ in LINES]
)
def test_the_line_confirms_its_cause_and_only_it(tmp_path: Path, text: str, expected: str) -> None:
    log = tmp_path / "job.log"
    log.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    assert confirmed(log) == {expected}


def test_every_entry_names_its_source() -> None:
    assert all(source.strip() for _, _, source, _ in LINES)
    assert len({i for i, *_ in LINES}) == len(LINES)
