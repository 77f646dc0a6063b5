from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from envcheck.errors import MatrixError
from envcheck.matrix.load import load, parse_text
from envcheck.matrix_validate import validate
from envcheck.model.versions import DriverVersion
from tests.builtin_matrix import builtin_matrix
from tests.conftest import cli_env, run_cli

BUILTIN = builtin_matrix()


def test_builtin_matrix_is_valid_and_sourced():
    assert validate(BUILTIN) == []
    for table in (
        BUILTIN.toolkits,
        BUILTIN.gpus,
        BUILTIN.torch_releases,
        BUILTIN.vllm_releases,
        BUILTIN.known_bad,
    ):
        for entry in table:
            assert entry.source.strip(), entry
    assert len(BUILTIN.torch_releases) >= 30 and len(BUILTIN.vllm_releases) >= 70


def test_unverified_facts_stay_marked():
    sles = BUILTIN.os_glibc("sles", "15.6")
    assert sles is not None and not sles.verified and "Leap used as proxy" in sles.source
    a800 = BUILTIN.gpu_model("NVIDIA A800")
    assert a800 is not None and a800.verified and "NVIDIA A800 80GB PCIe, 8.0" in a800.source
    assert not BUILTIN.torch_release(
        __import__("packaging.version").version.Version("2.15.0")
    ).verified


def test_facts_read_from_the_index_name_their_wheel():
    # vLLM 0.33.0's .metadata file is 404; its pins were read from the wheel itself
    vllm = BUILTIN.vllm_release(__import__("packaging.version").version.Version("0.33.0"))
    assert vllm is not None and vllm.verified and str(vllm.torch) == "==2.14.0"
    assert "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl" in vllm.source
    assert "sha256 4b6bdec4ab269990bf70d45a3c1e94c3760a27064513760193b26d6f0da883aa" in vllm.source


def test_driver_versions_print_as_written():
    toolkit = BUILTIN.toolkit(__import__("packaging.version").version.Version("12.1"))
    assert isinstance(toolkit.min_driver, DriverVersion) and str(toolkit.min_driver) == "530.30.02"


@pytest.mark.parametrize(
    ("text", "where", "key", "message"),
    [
        (
            '[[torch]]\nversion = "2.4.0"\npython = ["3.11"]\nvariants = ["cu121"]\nsource = "x"\nfavourite = true\n',
            "f.toml:6",
            "torch[0].favourite",
            "unknown key",
        ),
        (
            '[[gpu]]\nname = "X"\nmatch = "X"\ncompute_capability = "9.0"\narchitecture = "Hopper"\nsource = "s"\n',
            "f.toml:3",
            "gpu[0].match",
            "expected a list",
        ),
        (
            '[[toolkit]]\ncuda = "12.x"\nsource = "s"\n',
            "f.toml:2",
            "toolkit[0].cuda",
            "invalid version '12.x'",
        ),
        (
            '[[vllm]]\nversion = "0.6.3"\ntorch = "=2.4.0"\nsource = "s"\n',
            "f.toml:3",
            "vllm[0].torch",
            "invalid version specifier '=2.4.0'",
        ),
        (
            '[[ray]]\nversion = "2.40.0"\nsource = "s"\n',
            "f.toml:1",
            "ray[0].python",
            "missing required key",
        ),
        ("[[torch]\n", "f.toml:1", None, "invalid TOML"),
        ("[surprise]\nx = 1\n", "f.toml:1", "surprise", "unknown key"),
    ],
)
def test_parse_errors_name_file_line_and_key(text, where, key, message):
    with pytest.raises(MatrixError) as err:
        parse_text(text, "f.toml")
    assert err.value.where == where
    assert err.value.key == key
    assert message in err.value.message


OVERLAY_RULE = textwrap.dedent(
    """\
    [meta]
    description = "site overlay: our internal pins"

    [[known_bad]]
    code = "SITE001"
    id = "internal-torch-2.6-ban"
    title = "torch 2.6.0 is banned on our clusters"
    severity = "error"
    message = "torch {pkg[torch]} is banned here (INC-1234)"
    symptom = "random NaNs in our fp8 kernels"
    cause = "internal incident INC-1234"
    source = "https://wiki.example.internal/INC-1234"
    [known_bad.when]
    packages = { torch = "==2.6.0" }

    [[torch_index]]
    url_template = "https://mirror.example.internal/torch/{variant}"
    source = "our artifact mirror"
    """
)


def test_site_overlay_adds_rules_and_overrides(tmp_path):
    (tmp_path / "site.toml").write_text(OVERLAY_RULE)
    matrix = load([str(tmp_path)], env={})
    assert matrix.torch_index_url("cu124") == "https://mirror.example.internal/torch/cu124"
    assert "SITE001" in {k.code for k in matrix.known_bad}
    assert len(matrix.torch_releases) == len(BUILTIN.torch_releases)
    assert matrix.files[-1] == str(tmp_path / "site.toml")


def test_overlay_replaces_entries_with_the_same_identity(tmp_path):
    (tmp_path / "x.toml").write_text(
        '[[constant]]\nname = "ray.memory_usage_threshold"\nvalue = 0.8\nsource = "our policy"\n'
    )
    assert load([str(tmp_path)], env={}).constant("ray.memory_usage_threshold") == 0.8


def test_overlay_via_environment_variable_fires_in_check(tmp_path):
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "site.toml").write_text(OVERLAY_RULE)
    spec = tmp_path / "n.toml"
    spec.write_text('[packages]\ntorch = "2.6.0"\n')
    result = run_cli(
        "check", "--spec", str(spec), "--json", env=cli_env(ENVCHECK_MATRIX=str(overlay))
    )
    findings = {f["code"]: f for f in result.json()["data"]["findings"]}
    assert result.returncode == 1
    assert findings["SITE001"]["message"] == "torch 2.6.0 is banned here (INC-1234)"
    assert findings["SITE001"]["references"] == ["https://wiki.example.internal/INC-1234"]
    explained = run_cli("explain", "SITE001", "--json", env=cli_env(ENVCHECK_MATRIX=str(overlay)))
    assert explained.json()["data"]["title"] == "torch 2.6.0 is banned on our clusters"


def test_missing_overlay_directory(tmp_path, cli):
    (tmp_path / "x.toml").write_text('[packages]\ntorch = "2.4.0"\n')
    result = cli("check", "--spec", str(tmp_path / "x.toml"), "--matrix", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert "matrix overlay directory does not exist" in result.stderr


def test_overlay_that_is_a_file_or_from_the_environment_says_so(tmp_path, cli):
    spec = tmp_path / "x.toml"
    spec.write_text('[packages]\ntorch = "2.4.0"\n')
    result = cli("check", "--spec", str(spec), "--matrix", str(spec))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"envcheck: error: {spec}: is not a directory (a matrix overlay is a directory of"
        " *.toml files)\n"
    )
    missing = tmp_path / "nope"
    result = run_cli("check", "--spec", str(spec), env=cli_env(ENVCHECK_MATRIX=str(missing)))
    assert result.returncode == 2
    assert result.stderr == (
        f"envcheck: error: {missing}: matrix overlay directory does not exist"
        " (from ENVCHECK_MATRIX)\n"
    )


def test_overlay_code_clashing_with_a_code_rule(tmp_path, cli):
    (tmp_path / "o.toml").write_text(OVERLAY_RULE.replace("SITE001", "DRV101"))
    result = cli("rules", "--matrix", str(tmp_path))
    assert result.returncode == 2 and "DRV101 is already a built-in rule" in result.stderr
    assert f"{tmp_path / 'o.toml'}:5: key 'known_bad[0].code'" in result.stderr  # file:line


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        (
            '[[vllm]]\nversion = "9.9.9"\ntorch = "==9.8.7"\nsource = "s"\n',
            "vllm[0].torch",
            "pins torch 9.8.7, which has no [[torch]] entry",
        ),
        (
            '[[torch]]\nversion = "9.9.9"\npython = ["3.11"]\nvariants = ["cu999"]\npypi_default = "cu998"\nsource = "s"\n',
            "torch[0].pypi_default",
            "is not one of its variants",
        ),
        (
            '[[known_bad]]\ncode = "site1"\nid = "x"\ntitle = "t"\nseverity = "info"\nmessage = "{oops}"\nsymptom = "s"\ncause = "c"\nsource = "s"\n[known_bad.when]\nabsent = ["x"]\n',
            "known_bad[0].code",
            "must be 2-4 capital letters",
        ),
        (
            '[[known_bad]]\ncode = "SITE002"\nid = "x"\ntitle = "t"\nseverity = "info"\nmessage = "m"\nsymptom = "s"\ncause = "c"\nsource = "s"\n[known_bad.when]\nabsent = ["x"]\n[known_bad.fix]\nsummary = "install CUDA {torch_cuda} for {cuda}"\napplicability = "manual"\n',
            "known_bad[0].fix.summary",
            "unknown placeholder {cuda}",
        ),
        (
            '[[companion]]\npackage = "torchvision"\nversion = "9.9"\ntorch = "9.9.9"\nsource = "s"\n',
            "companion[0].torch",
            "torch 9.9.9 has no [[torch]] entry",
        ),
    ],
)
def test_validate_cross_references(tmp_path, cli, text, key, message):
    (tmp_path / "site.toml").write_text(text)
    result = cli("matrix", "validate", str(tmp_path))
    assert result.returncode == 2
    line = next(x for x in result.stderr.splitlines() if key in x)
    assert line.startswith(f"envcheck: error: {tmp_path / 'site.toml'}:") and message in line


def test_validate_ok(cli):
    result = cli("matrix", "validate")
    assert result.returncode == 0 and result.stdout.startswith("matrix ok:")
    data = cli("matrix", "validate", "--json").json()
    assert data["status"] == "ok" and data["data"]["problems"] == []


def test_gpu_lookup_agrees_with_matching_every_token_pattern() -> None:
    """gpu_model compiles a token's pattern only when the token occurs in the name: it names
    the same model as trying every token's whole-word pattern, longest token first."""
    import re

    from envcheck.matrix.model import gpu_name_forms

    matrix = load()
    tokens = sorted(
        ((t, g) for g in matrix.gpus for t in g.match), key=lambda p: len(p[0]), reverse=True
    )

    def by_every_pattern(name: str) -> object:
        for form in gpu_name_forms(name):
            for token, gpu in tokens:
                word = rf"(?<![A-Za-z0-9]){re.escape(token)}(?![A-Za-z0-9])"
                if re.search(word, form, re.IGNORECASE):
                    return gpu
        return None

    names = [g.name for g in matrix.gpus] + [t for t, _g in tokens]
    names += [n.upper() for n in names] + [n.lower().replace(" ", "-") for n in names]
    names += [
        "NVIDIA GeForce RTX 5090",
        "RTX5070TI",
        "nvidia-h100-80gb-hbm3",
        "NVIDIA_A100",
        "Tesla V100-SXM2-32GB",
        "NVIDIA H100 80GB HBM3 / A100",
        "NVIDIA A1000",
        "NVİDİA H100",  # not ASCII: every pattern is tried
        "H200ı",
        "",
        "unknown accelerator",
    ]
    for name in names:
        assert matrix.gpu_model(name) is by_every_pattern(name), name


SONAME = '[[soname]]\nname = "libfoo.so.1"\nkind = "system"\nsource = "s"\n'
SIGNATURE = (
    '[[signature]]\nid = "site-foo"\npattern = "foo failed"\nmeaning = "m"\n'
    'causes = ["SYS150"]\nsource = "s"\n'
)


def test_validate_names_two_entries_with_one_identity_in_a_file(tmp_path, cli):
    """The merge keeps one entry per identity: a second one in the same directory would
    silently replace the first, so `matrix validate` names both places and changes nothing."""
    path = tmp_path / "site.toml"
    path.write_text(SONAME + "\n" + SONAME)
    before = path.read_bytes()
    result = cli("matrix", "validate", str(tmp_path))
    assert result.returncode == 2, result.stderr
    (line,) = [x for x in result.stderr.splitlines() if "soname[1]" in x]
    assert line.startswith(f"envcheck: error: {path}:6: key 'soname[1]'")
    assert f"the same soname as soname[0] at {path}:1" in line
    assert path.read_bytes() == before
    data = cli("matrix", "validate", "--json", str(tmp_path)).json()
    assert data["status"] == "error" and data["data"]["problems"][0]["key"] == "soname[1]"


def test_validate_names_one_identity_in_two_files_of_a_directory(tmp_path, cli):
    (tmp_path / "a.toml").write_text(SIGNATURE)
    (tmp_path / "b.toml").write_text(SIGNATURE.replace("foo failed", "foo broke"))
    result = cli("matrix", "validate", str(tmp_path))
    assert result.returncode == 2
    assert f"{tmp_path / 'b.toml'}:1: key 'signature[0]'" in result.stderr
    assert f"signature[0] at {tmp_path / 'a.toml'}:1" in result.stderr


def test_an_overlay_replacing_a_builtin_entry_is_no_clash(tmp_path, cli):
    """An overlay's entry with a built-in identity replaces it on purpose."""
    same = SONAME.replace('"libfoo.so.1"', '"libcudart.so.12"\ncuda_major = 12')
    (tmp_path / "site.toml").write_text(same)
    result = cli("matrix", "validate", str(tmp_path))
    assert result.returncode == 0 and "the same soname" not in result.stderr, result.stderr


def test_the_files_are_those_pathlib_finds(tmp_path: Path) -> None:
    from envcheck.matrix.load import GENERATED_DIR, PROFILES_DIR, matrix_files, tree_files
    from envcheck.matrix.python_names import LAZY

    for rel in (
        "a.toml",
        "cuda/b.toml",
        "cuda/deep/c.toml",
        "x.txt",
        ".h.toml",
        f"{GENERATED_DIR}/g.toml",
        f"{GENERATED_DIR}/sub/h.toml",
        f"{PROFILES_DIR}/p.toml",
        "sub/generated/k.toml",
        f"{GENERATED_DIR}/{sorted(LAZY)[0]}",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "d.toml").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "cuda")
    found = [
        p
        for p in tmp_path.rglob("*.toml")
        if p.is_file() and p.relative_to(tmp_path).parts[0] not in (GENERATED_DIR, PROFILES_DIR)
    ]
    expected = sorted(found, key=lambda p: p.relative_to(tmp_path).parts)
    assert matrix_files(tmp_path) == expected
    generated = sorted(
        p for p in (tmp_path / GENERATED_DIR).glob("*.toml") if p.is_file() and p.name not in LAZY
    )
    assert tree_files(tmp_path) == expected + generated
