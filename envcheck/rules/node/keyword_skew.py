"""PY160: a call passes a keyword argument the installed release of the callee does not take.

Python's own `TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'`
names the callable and the keyword. When a release of the callee's library removed that keyword
(trl 0.16 dropped SFTTrainer's ``tokenizer``) or added it (peft 0.10 added LoraConfig's
``layer_replication``, so an adapter saved by a newer peft does not load in an older one), the
caller and the callee are from two sides of that change: version skew, not a bug in either.
Which release changed what is data (matrices/packages/keyword_changes.toml, read from the
libraries' wheels); the installed version, when the node states it, rules the cause out.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import KeywordChange
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.import_releases import short
from envcheck.rules.node.imports import frame_distribution

# CPython's wording (Python/ceval.c, Python/getargs.c): '%U() got an unexpected keyword
# argument '%S''; the callable is its __qualname__ from Python 3.10, its bare name before;
# also as rendered Markdown leaves it (`_as_python_prints`)
_UNEXPECTED = lazy(
    r"(?P<callee>[A-Za-z_][A-Za-z0-9_.]*)(?:\(\))? got an unexpected keyword argument "
    r"'(?P<keyword>[A-Za-z_][A-Za-z0-9_ ]*[A-Za-z0-9_])'"
)
# its other refusals of a call against the callee's signature (Python/ceval.c missing_arguments:
# '%U() missing %i required %s argument%s: %U', the names quoted and joined by ', ' and ' and ';
# '%U() got multiple values for argument '%S'')
_MISSING = lazy(
    r"(?P<callee>[A-Za-z_][A-Za-z0-9_.]*)\(\) missing [0-9]+ required "
    r"(?:positional|keyword-only) arguments?: '(?P<keyword>[A-Za-z_][A-Za-z0-9_]*)'"
)
_MULTIPLE = lazy(
    r"(?P<callee>[A-Za-z_][A-Za-z0-9_.]*)\(\) got multiple values for (?:keyword )?"
    r"argument '(?P<keyword>[A-Za-z_][A-Za-z0-9_]*)'"
)
# '%U() takes %s positional argument%s but %zd%U %s given' (too_many_positional)
_TOO_MANY = lazy(
    r"(?P<callee>[A-Za-z_][A-Za-z0-9_.]*)\(\) takes (?P<takes>(?:from [0-9]+ to )?[0-9]+) "
    r"positional arguments? but (?P<given>[0-9]+) "
)


@rule("PY160", "keyword-changed-by-release", Severity.ERROR)
def keyword_changed_by_release(facts: Facts) -> Iterable[Hit]:
    """A call passes an argument that the installed release of the callee does not take

    ## What it checks
    Python's `TypeError: X() got an unexpected keyword argument 'K'` where a release of X's
    library removed K (the caller was written for the releases before) or added it (the caller,
    or a saved config such as peft's adapter_config.json, comes from a newer release), or where
    the library's own code passes a new argument to a method others override (transformers 4.46
    passes num_items_in_batch to a Trainer subclass's compute_loss), or where no release of
    the library took K and the calling package's own copy of the callable does, used only with
    some releases (verl's LLM copy for vLLM 0.6.3 takes model_hf_config), from the
    matrix's `[[keyword_change]]` table (each library's wheels read release by release; vLLM's
    EngineArgs fields, which LLM(...) and AsyncEngineArgs(...) reach). Pythons before 3.10
    print a bare `__init__()`: the class the traceback's last source line calls names it. The
    installed version, when known, must be on the failing side. CPython's other refusals of a
    call: `missing 1 required positional argument: 'K'` is confirmed where the table knows the
    release that changed K (an override that requires an argument the installed release does
    not pass yet, a parameter a release added or removed); otherwise it, and `got multiple
    values for argument 'K'`, name this cause with the fix the line allows (pass K, call by
    keyword, or the release the table says changed the callable's parameters). Only a log
    states it.

    ## Why it matters
    Nothing in pip's metadata catches it: a script, a trainer library or a saved adapter
    written against one release calls another, and the job dies at start-up however the
    environment is otherwise set up.

    ## Example
    `TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'` (trl 0.16
    removed it for `processing_class`).

    ## Fix
    A removed argument: pin the last release of the callee's library that takes it (trl 0.15.2
    for SFTTrainer's tokenizer; httpx 0.27.2 for Client's proxies), pass its replacement
    (processing_class), or upgrade the package whose call passes it (the traceback's caller,
    or the callers the table records: openai 1.55.3 stopped passing proxies); an added one: upgrade the callee's library to the first release with
    it (peft 0.10 for layer_replication), or drop the key from the saved config where the table
    names that workaround, or pin the calling package to its releases made for the older
    library: the package of the traceback's innermost frame under site-packages, below the
    release whose declared bound began requiring the library's new release (`trl<0.12` for
    transformers 4.46's Trainer processing_class), or the callers the table records; an argument a release began passing to an override: pin the last
    release before it (transformers 4.45.2) or accept the argument in the override; an argument
    only the caller's own copy takes: the release that copy was made for (vllm==0.6.3 for
    verl's model_hf_config), or a caller release made for the installed one. A required
    argument the call does not pass: pass it, or the release the caller was written for (an
    override requiring num_items_in_batch needs transformers 4.46 or newer, or a default for
    it); an argument given twice: pass the call's arguments by keyword.

    ## References
    - matrices/packages/keyword_changes.toml
    - python/cpython Python/getargs.c ('%U() got an unexpected keyword argument '%S'')
    - https://github.com/hiyouga/LlamaFactory/issues/6654 (vLLM 0.5.0 without limit_mm_per_prompt)
    - https://github.com/ustc-time-series/Time-R1/issues/7 (verl's model_hf_config; vllm==0.6.3)
    """
    raise Skip("only a log line states the call that failed", "log.python")


# the top-level package of a frame's file under site-packages (.../site-packages/trl/x.py -> trl)
_FRAME_PACKAGE = lazy(r"[/\\](?:site|dist)-packages[/\\]([A-Za-z0-9_]+)[/\\]")


def caller_of(facts: Facts, line: LogLine) -> str | None:
    """The distribution whose code made the call: the innermost traceback frame above the line
    under site-packages (trl's sft_trainer.py calling transformers' Trainer); None when the
    traceback does not show one."""
    found = _FRAME_PACKAGE.search(line.stated.get("importer_file", ""))
    return frame_distribution(facts, found.group(1)) if found else None


def caller_pin(facts: Facts, caller: str, library: str, added_in: Version) -> str | None:
    """'caller<F': the caller's releases before F admit a ``library`` older than ``added_in``
    and F is the first whose declared bound (generated/importers.toml, the caller's own
    setup.py/pyproject by release) excludes the ``library`` release before ``added_in``: the
    caller began requiring the release that added the argument there. None when the tables
    do not say."""
    rows = facts.matrix.python_importer(caller)
    lib = facts.matrix.python_names().library(library) if rows is not None else None
    if rows is None or lib is None:
        return None
    older = [r for r in lib.releases if r < added_in]
    if not older:
        return None
    before = max(older)
    for release in sorted(rows.releases):
        bound = rows.bound(library, release)
        if bound is not None and not bound.contains(before, prereleases=True):
            if release == min(rows.releases):
                return None  # every release scanned requires it: no older caller to pin
            return f"{caller}<{short(release)}"
    return None


def _have(entry: KeywordChange, installed: Version | None) -> str:
    """The installed release as the message names it: with its version where the node states it."""
    return (
        f"{entry.package} {installed}"
        if installed is not None
        else f"the installed {entry.package}"
    )


def _workaround(text: str | None, actions: list[Action]) -> str:
    """The table's workaround as the fix's words (', or ...'), added to ``actions`` too."""
    if not text:
        return ""
    actions.append(manual(text))
    return f", or {text}"


def _evidence(
    line: LogLine,
    callee: str,
    keyword: str,
    entry: KeywordChange,
    installed: Version | None,
    **release: str,
) -> dict[str, object]:
    """The finding's evidence: the call, its argument, the package, the release that changed
    it (``removed_in``, ``added_in``, ``passed_from``) and the installed one."""
    return {
        "line": line.line,
        "callee": callee,
        "argument": keyword,
        "package": entry.package,
        **release,
        "installed": str(installed) if installed is not None else None,
    }


def _removed(facts: Facts, line: LogLine, entry: KeywordChange, callee: str) -> Hit | None:
    assert entry.removed_in is not None
    installed = facts.known_version(entry.package)
    if installed is not None and installed < entry.removed_in:
        return None  # the installed release still takes the keyword: not this cause
    below = f"{entry.package}<{short(entry.removed_in)}"
    pin = f"{entry.package}=={entry.last}" if entry.last else below
    actions: list[Action] = [pip_install(pin)]
    rename = ""
    if entry.replacement:
        rename = f", or pass {entry.replacement} instead of the {entry.keyword} argument (its replacement)"
        actions.append(
            manual(
                f"rename the call's {entry.keyword} argument to {entry.replacement} (the caller's code)"
            )
        )
    rename += _workaround(entry.workaround, actions)
    have = _have(entry, installed)
    return Hit(
        f"{callee}() no longer takes the {entry.keyword} argument (line {line.line}): {entry.package} "
        f"{short(entry.removed_in)} removed it and {have} is not older; the caller was written "
        "for the releases before",
        evidence=_evidence(
            line, callee, entry.keyword, entry, installed, removed_in=str(entry.removed_in)
        ),
        fix=fix(
            f'Pin the last {entry.package} release with the {entry.keyword} argument: pip install "{pin}" '
            f"({below}){rename}, or {_upgrade_callers(facts, line, entry, actions)}",
            "unsafe",
            *actions,
        ),
    )


def _upgrade_callers(
    facts: Facts, line: LogLine, entry: KeywordChange, actions: list[Action]
) -> str:
    """'upgrade openai to 1.55.3 or newer ...': the packages the table records as passing a
    removed keyword before a release of their own (``callers``, "openai<1.55.3"), the one the
    traceback's innermost frame names first; else that frame's package; else the generic
    words. Their upgrades are added to ``actions``."""
    assert entry.removed_in is not None
    gone = short(entry.removed_in)
    caller = caller_of(facts, line)
    said: list[str] = []
    for text in entry.callers:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        fixed = next((s.version for s in req.specifier if s.operator == "<"), None)
        if fixed is None:
            continue
        name = canonicalize_name(req.name)
        if caller is not None and caller != name:
            continue  # the traceback shows another package making the call
        need = f"{req.name}>={fixed}"
        said.append(f'{req.name} to {fixed} or newer: pip install -U "{need}"')
        actions.append(manual(f'pip install -U "{need}"  (instead: {req.name} stops passing it)'))
    if said:
        return (
            f"upgrade the package whose call passes it to a release that no longer does "
            f"({'; '.join(said)}; other clients of {entry.package}: their release made for "
            f"{entry.package} {gone})"
        )
    if caller is not None and caller != canonicalize_name(entry.package):
        return (
            f"upgrade {caller}, whose call passes it, to a release made for {entry.package} {gone}"
        )
    return "upgrade the package whose call passes it"


def _added(facts: Facts, line: LogLine, entry: KeywordChange, callee: str) -> Hit | None:
    assert entry.added_in is not None
    installed = facts.known_version(entry.package)
    if installed is not None and installed >= entry.added_in:
        return None  # the installed release takes the keyword: not this cause
    need = f"{entry.package}>={short(entry.added_in)}"
    actions: list[Action] = [pip_install(need, flags=("--upgrade",))]
    other = _workaround(entry.workaround, actions)
    have = _have(entry, installed)
    caller = caller_of(facts, line)
    by = "the caller (or a saved config) comes from a newer release"
    if caller is not None and caller != entry.package:
        called = facts.known_version(caller)
        by = (
            f"the call is {caller}{f' {called}' if called is not None else ''}'s, made for "
            f"a newer {entry.package}"
        )
        pin = caller_pin(facts, caller, entry.package, entry.added_in)
        if pin is not None:
            other += (
                f", or pin {caller} to its releases made for an older {entry.package}: "
                f'pip install "{pin}" ({caller} requires {need} from there on)'
            )
            actions.append(manual(f'pip install "{pin}"  (instead: {caller} before it)'))
        else:
            other += f", or install the {caller} release made for {have}"
    else:
        other += _known_callers(entry, need, actions)
    return Hit(
        f"{callee}() does not take the {entry.keyword} argument yet (line {line.line}): {entry.package} "
        f"{short(entry.added_in)} added it and {have} is older; {by}",
        evidence=_evidence(
            line, callee, entry.keyword, entry, installed, added_in=str(entry.added_in)
        ),
        fix=fix(
            f'Upgrade {entry.package} to a release with the {entry.keyword} argument: pip install --upgrade "{need}"'
            f"{other}",
            "unsafe",
            *actions,
        ),
    )


def _any_newer(facts: Facts, line: LogLine, entry: KeywordChange, callee: str, keyword: str) -> Hit:
    """An argument the table does not name, of a callable whose library says every unknown
    argument means a config saved by a newer release (peft's LoraConfig)."""
    installed = facts.known_version(entry.package)
    have = _have(entry, installed)
    actions: list[Action] = [pip_install(entry.package, flags=("--upgrade",))]
    other = _workaround(
        entry.workaround.replace("{keyword}", keyword) if entry.workaround else None, actions
    )
    return Hit(
        f"{callee}() of {have} does not take the {keyword} argument (line {line.line}): the "
        f"config was saved by a newer {entry.package}",
        evidence=_evidence(line, callee, keyword, entry, installed),
        fix=fix(
            f"Upgrade {entry.package} to the release that saved it: pip install --upgrade "
            f"{entry.package}{other}",
            "unsafe",
            *actions,
        ),
    )


def _known_callers(entry: KeywordChange, need: str, actions: list[Action]) -> str:
    """', or pin trl below 0.12 ...': the packages the table records as passing the keyword
    (``callers``, "trl>=0.12.0"), each pinned below the release that began passing it, where
    the traceback does not show which package made the call; added to ``actions`` too."""
    said = []
    for text in entry.callers:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        first = next((s.version for s in req.specifier if s.operator == ">="), None)
        if first is None:
            continue
        pin = f"{req.name}<{short(Version(first))}"
        said.append(f'pip install "{pin}" where {req.name} makes the call')
        actions.append(manual(f'pip install "{pin}"  (instead: {req.name} before it passed it)'))
    if not said:
        return ""
    return (
        f", or pin the package that passes {entry.keyword} to its releases made for an older "
        f"{entry.package} ({'; '.join(said)}; it requires {need} from there on)"
    )


def _passed(facts: Facts, line: LogLine, entry: KeywordChange, callee: str) -> Hit | None:
    assert entry.passed_from is not None
    installed = facts.known_version(entry.package)
    if installed is not None and installed < entry.passed_from:
        return None  # the installed release does not pass it yet: not this cause
    below = f"{entry.package}<{short(entry.passed_from)}"
    pin = f"{entry.package}=={entry.last}" if entry.last else below
    actions: list[Action] = [pip_install(pin)]
    other = _workaround(entry.workaround, actions)
    have = _have(entry, installed)
    return Hit(
        f"{have} passes the {entry.keyword} argument to {callee}() (line {line.line}), as "
        f"{entry.package} does from {short(entry.passed_from)} on; that override was written "
        "for the releases before",
        evidence=_evidence(
            line, callee, entry.keyword, entry, installed, passed_from=str(entry.passed_from)
        ),
        fix=fix(
            f'Pin the last {entry.package} release before it: pip install "{pin}" ({below})'
            f"{other}, or upgrade the package that defines {callee}() to a release made for "
            f"{entry.package} {short(entry.passed_from)}",
            "unsafe",
            *actions,
        ),
    )


def _vendored(facts: Facts, line: LogLine, entry: KeywordChange, callee: str) -> Hit | None:
    """A keyword no release of the library took: the calling package's own copy of the callable
    takes it (verl's LLM for vLLM 0.6.3), used only with the releases ``vendored_for``; with
    another release installed, the package's call reaches the library's own callable."""
    assert entry.vendored_by is not None
    try:
        wanted = Requirement(entry.vendored_for or "")
    except InvalidRequirement:
        return None
    installed = facts.known_version(entry.package)
    if installed is not None and wanted.specifier.contains(installed, prereleases=True):
        return None  # the package uses its own copy with this release: not this cause
    by, pin = entry.vendored_by, str(wanted)
    actions: list[Action] = [pip_install(pin)]
    other = _workaround(entry.workaround, actions)
    have = _have(entry, installed)
    return Hit(
        f"{callee}() of {entry.package} never took the {entry.keyword} argument (line "
        f"{line.line}): {by}'s own copy of it does, and {by} uses that copy only with {pin}; "
        f"with {have}, {by}'s call reaches {entry.package}'s own",
        evidence=_evidence(
            line, callee, entry.keyword, entry, installed, vendored_by=by, vendored_for=pin
        ),
        fix=fix(
            f"Install the {entry.package} release {by}'s copy was made for: pip install "
            f'"{pin}"{other}, or a {by} release made for {have} (one that calls '
            f"{entry.package}'s own API)",
            "unsafe",
            *actions,
        ),
    )


def _as_python_prints(callee: str, keyword: str) -> tuple[str, str]:
    """The callee and keyword as Python printed them, from a line copied out of rendered
    Markdown (an issue page, a blog): the renderer takes `__init__`'s underscores for bold
    (`Accelerator.init got ...`) and a keyword's underscores may be lost to spaces
    (`'dispatch batches'`); a keyword never holds a space, so a space was an underscore."""
    if callee.endswith(".init"):
        callee = callee.removesuffix(".init") + ".__init__"
    return callee, keyword.replace(" ", "_")


@from_log("PY160")
def keyword_changed_in_log(facts: Facts, line: LogLine) -> Hit | None:
    found = _UNEXPECTED.search(line.text)
    if found is None:
        missing, multiple = _MISSING.search(line.text), _MULTIPLE.search(line.text)
        if missing is not None:
            return _missing(facts, line, missing.group("callee"), missing.group("keyword"))
        if multiple is not None:
            _given_twice(facts, line, multiple.group("callee"), multiple.group("keyword"))
        too_many = _TOO_MANY.search(line.text)
        if too_many is not None:
            _too_many(facts, line, too_many.group("callee"), too_many.group("takes"))
        raise NotStated(f"line {line.line} is cut before the keyword", "log.python")
    callee, keyword = _as_python_prints(found.group("callee"), found.group("keyword"))
    called = line.stated.get("call_class")
    if "." not in callee and called:
        # Python 3.9's bare `__init__()`: the class the traceback's last source line calls
        # names it, and no other class's change is this one
        callee = f"{called}.{callee}"
    entries = facts.matrix.keyword_changes_for(callee, keyword)
    if len({e.package for e in entries}) != 1:
        # the caller's own argument, or a change the table does not hold (or a bare name that
        # several libraries' changes share): the line alone does not say which release
        raise NotStated(
            f"line {line.line}: no release the matrix knows added or removed {callee}()'s "
            f"{keyword} argument (matrices/packages/keyword_changes.toml)",
            "log.python",
            fix=_across(facts, line, callee, keyword),
        )
    for entry in entries:
        if entry.keyword == "*":
            return _any_newer(facts, line, entry, callee, keyword)
        hit = (
            _vendored(facts, line, entry, callee)
            if entry.vendored_by is not None
            else _removed(facts, line, entry, callee)
            if entry.removed_in is not None
            else _added(facts, line, entry, callee)
            if entry.added_in is not None
            else _passed(facts, line, entry, callee)
            if entry.passed_from is not None
            else None
        )
        if hit is not None:
            return hit
    return None


def _across(facts: Facts, line: LogLine, callee: str, keyword: str) -> str | None:
    """The open cause's fix where the traceback shows the package whose code made the call
    (its innermost frame under site-packages): that package and the callee's library are from
    releases made for different versions of each other, the versions where the log states
    them. None when the traceback does not show the caller (the generic fix stands)."""
    caller = caller_of(facts, line)
    if caller is None:
        return None
    version = facts.known_version(caller)
    named = f"{caller} {version}" if version is not None else caller
    script = line.stated.get("script_file")
    if script:
        # a script outside site-packages called into the package, whose frame forwards the
        # argument (vLLM's LLM(...) to EngineArgs): the script and the package may be from
        # two releases, a script from the package's own repository newer than the install
        return (
            f"{script} reaches {callee}() through {named}'s code with {keyword}, which the "
            f"installed release does not take: install the {caller} release the script was "
            f"written for (pip install -U {caller} where the script is newer, as one from "
            f"{caller}'s repository is; or the {caller} release its requirements pin), or run "
            f"the script of the installed {caller} release; where {caller}'s own code passes "
            f"{keyword}, install the release of {callee}()'s library that {caller} requires "
            f"(pip check)"
        )
    return (
        f"{named}'s code passes {keyword} to {callee}(), which the installed release of "
        f"{callee}()'s library does not take: install the release of that library {caller} "
        f"requires (pip check names the range; pip show {caller} states it), or pin {caller} "
        f"to the release made for the installed one"
    )


def _changes_of(facts: Facts, callee: str) -> str:
    """' (trl 0.16 removed tokenizer; trl 0.13 removed packing, max_seq_length, ...)': the
    releases the table knows changed ``callee``'s parameters, the ones a caller written for
    another release trips on, newest first; empty when it knows none."""
    changed: dict[tuple[str, Version, str], list[str]] = {}
    for entry in facts.matrix.keyword_changes:
        if entry.keyword == "*" or entry not in facts.matrix.keyword_changes_for(
            callee, entry.keyword
        ):
            continue
        if entry.removed_in is not None:
            key = (entry.package, entry.removed_in, "removed")
        elif entry.added_in is not None:
            key = (entry.package, entry.added_in, "added")
        else:
            continue
        changed.setdefault(key, []).append(entry.keyword)
    said = [
        f"{package} {short(release)} {verb} "
        + ", ".join(names[:3])
        + (", ..." if len(names) > 3 else "")
        for (package, release, verb), names in sorted(
            changed.items(), key=lambda kv: kv[0][1], reverse=True
        )
    ]
    return f" ({'; '.join(said[:3])})" if said else ""


def _missing(facts: Facts, line: LogLine, callee: str, keyword: str) -> Hit:
    """`X() missing 1 required positional argument: 'K'`: the callable requires K and the call
    does not pass it. Where the table knows the release that changed K for X, the caller and the
    callee are from two sides of it: an override requiring an argument the library passes only
    from release R on, or a parameter R removed (installed older than R: upgrade to R), or a
    parameter R added (installed R or newer, the caller written before: pin below R). Otherwise
    the cause stays open with the line's own fix."""
    for entry in facts.matrix.keyword_changes_for(callee, keyword):
        if entry.keyword != keyword:
            continue
        installed = facts.known_version(entry.package)
        have = _have(entry, installed)
        actions: list[Action] = []
        first = entry.passed_from or entry.removed_in
        if first is not None:
            if installed is not None and installed >= first:
                continue  # the installed release passes it (or no longer requires it)
            need = f"{entry.package}>={short(first)}"
            actions.append(pip_install(need, flags=("--upgrade",)))
            done = "passes it to the override" if entry.passed_from else "no longer requires it"
            other = _workaround(
                f"give {keyword} a default in {callee}()'s signature ({keyword}=None)"
                if entry.passed_from
                else None,
                actions,
            )
            return Hit(
                f"{callee}() requires the {keyword} argument and {have} does not pass it (line "
                f"{line.line}): {entry.package} {done} from {short(first)} on; the code was "
                "written for that release",
                evidence=_evidence(line, callee, keyword, entry, installed, needs=str(first)),
                fix=fix(
                    f"Upgrade {entry.package} to {short(first)} or newer: pip install --upgrade "
                    f'"{need}"{other}',
                    "unsafe",
                    *actions,
                ),
            )
        if entry.added_in is not None:
            if installed is not None and installed < entry.added_in:
                continue  # the installed release does not have the parameter
            below = f"{entry.package}<{short(entry.added_in)}"
            actions.append(pip_install(below))
            other = _workaround(f"pass {keyword} in the call to {callee}()", actions)
            return Hit(
                f"{callee}() of {have} requires the {keyword} argument the call does not pass "
                f"(line {line.line}): {entry.package} {short(entry.added_in)} added it; the "
                "caller was written for the releases before",
                evidence=_evidence(
                    line, callee, keyword, entry, installed, added_in=str(entry.added_in)
                ),
                fix=fix(
                    f'Pin the last {entry.package} release before it: pip install "{below}"{other}',
                    "unsafe",
                    *actions,
                ),
            )
    raise NotStated(
        f"line {line.line}: no release the matrix knows made {callee}()'s {keyword} argument "
        "required (matrices/packages/keyword_changes.toml)",
        "log.python",
        fix=(
            f"pass {keyword} in the call to {callee}() (the installed release requires it), or "
            f"install the release of {callee}()'s library the calling code was written for (the "
            f"pin in its requirements){_changes_of(facts, callee)}"
        ),
    )


def _given_twice(facts: Facts, line: LogLine, callee: str, keyword: str) -> None:
    """`X() got multiple values for argument 'K'`: the call fills K by position and by name,
    as a caller written for another parameter order does. The line does not say which release:
    the cause stays open with its fix, keyword arguments (and the releases the table knows
    changed X's parameters)."""
    raise NotStated(
        f"line {line.line}: the call to {callee}() gives {keyword} twice; the line does not say "
        "which release changed the parameters",
        "log.python",
        fix=(
            f"pass the call's arguments to {callee}() by keyword ({keyword}=... once, and no more "
            "positional arguments than the installed release's parameters before it), or install "
            f"the release of {callee}()'s library the calling code was written for"
            f"{_changes_of(facts, callee)}"
        ),
    )


def _too_many(facts: Facts, line: LogLine, callee: str, takes: str) -> None:
    """`X() takes 2 positional arguments but 3 were given`: the call passes more arguments than
    the installed callable declares, as a caller written for a release with one more parameter
    does, or a library that began passing one more to a method a subclass overrides. The line
    names no argument: the cause stays open with its fix."""
    raise NotStated(
        f"line {line.line}: the call gives {callee}() more positional arguments than the "
        f"{takes} it takes; the line does not say which release changed the parameters",
        "log.python",
        fix=(
            f"install the release of {callee}()'s library the calling code was written for (the "
            "pin in its requirements; a method you override, such as forward(), takes the "
            f"arguments the installed library now passes: add them to its signature, or *args)"
            f"{_changes_of(facts, callee)}"
        ),
    )
