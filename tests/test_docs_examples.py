"""The code blocks of README.md, CONTRIBUTING.md and docs/*.md, run as printed.

Every fenced code block of those pages carries a marker, an HTML comment on the last
non-blank line before its opening fence (MyST and GitHub both hide HTML comments):

``<!-- runnable -->``
    A ``python`` block is executed; the runnable Python blocks of a page share one
    namespace, in page order, so a later block uses what an earlier one defined.  In a
    ``bash`` or ``console`` block every command line (``$ `` prompts stripped, ``#``
    comments dropped, ``&&`` chains split) is run, ``kernelmaps ...`` as
    ``sys.executable -m kernelmaps ...`` and ``python ...`` as ``sys.executable ...``;
    a command that exits with an error fails the test.  ``<!-- runnable needs=dask,distributed -->``
    skips the page, with one reason, where a named module cannot be imported.
``<!-- output -->``
    What the runnable block before it prints (its standard output).  A line ``...`` matches
    any number of lines and ``...`` within a line any text.  A number with a decimal point
    or an exponent matches within one unit of its last printed digit: the examples are
    seeded, so the value printed differs between machines only by the rounding of the
    arithmetic (BLAS kernels, summation order), which moves a rounded value by at most one
    unit in its last place; any other number, and all other text, must match exactly
    (runs of spaces count as one).
``<!-- not-run: reason -->``
    Shown, not run, for the reason given (it installs, needs a GPU, a cluster, the network
    or data that is not bundled, runs for minutes, or is not a command).

MyST directives (```` ```{toctree} ````) are not code blocks.  Each page runs in a fresh
temporary folder, with the bundled data sets only (``KERNELMAPS_DATA`` unset).  Set
``KERNELMAPS_UPDATE_DOCS=1`` to rewrite, in place, every output block that no longer
matches with what its block now prints (then restore any ``...`` it held).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")],
    key=lambda path: path.relative_to(ROOT).as_posix(),
)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)")
_MARKER = re.compile(r"^\s*<!--\s*(runnable|output|not-run)\b\s*(.*?)\s*-->\s*$")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_RUNNABLE_LANGUAGES = {"python", "bash", "console"}
_CLI_TIMEOUT_S = 300


@dataclasses.dataclass
class Block:
    """One fenced code block of a page: its marker and its lines."""

    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    kind: str | None  # "runnable", "output", "not-run" or None (no marker)
    argument: str  # the marker's text after its kind
    body: list[str]
    start: int  # index of the body's first line in the page's lines
    end: int  # index one past the body's last line

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def needs(self) -> list[str]:
        match = re.fullmatch(r"needs=(\S+)", self.argument)
        return match.group(1).split(",") if match else []


def parse_blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, MyST directives left out."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        ticks, language = fence.groups()
        close = next(
            (j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(ticks)),
            len(lines),
        )
        if not language.startswith("{"):
            kind, argument = _marker_before(lines, i)
            body = lines[i + 1 : close]
            blocks.append(Block(page, i + 1, language, kind, argument, body, i + 1, close))
        i = close + 1
    return blocks


def _marker_before(lines: list[str], fence: int) -> tuple[str | None, str]:
    previous = next((line for line in reversed(lines[:fence]) if line.strip()), "")
    marker = _MARKER.match(previous)
    if not marker:
        return None, ""
    kind, argument = marker.groups()
    return kind, argument.removeprefix(":").strip()


def marker_problems(blocks: list[Block]) -> list[str]:
    """Every block without a valid marker, and every output block without its runnable block."""
    problems = []
    last_runnable = None
    for block in blocks:
        if block.kind is None:
            problems.append(
                f"{block.where}: a code block without a marker; put <!-- runnable -->, "
                "<!-- output --> or <!-- not-run: reason --> on the line before it"
            )
        elif block.kind == "not-run" and not block.argument:
            problems.append(f"{block.where}: <!-- not-run --> without a reason; say why")
        elif block.kind == "runnable" and block.language not in _RUNNABLE_LANGUAGES:
            problems.append(
                f"{block.where}: a runnable block in {block.language or 'no language'}; "
                f"mark it ```python, ```bash or ```console"
            )
        elif block.kind == "output" and (last_runnable is None or last_runnable.kind != "runnable"):
            problems.append(f"{block.where}: an output block not after a runnable block")
        if block.kind in ("runnable", "output"):
            last_runnable = block if block.kind == "runnable" else None
    return problems


# -- comparing printed output ---------------------------------------------------------------


def _line_pattern(expected: str) -> tuple[re.Pattern[str], list[str]]:
    """A regex for one expected line, each number a group, and the numbers' texts."""
    parts, numbers = [], []
    for token in re.split(r"(\.\.\.|\s+)", expected.strip()):
        if token == "...":
            parts.append(".*?")
        elif token.isspace():
            parts.append(r"\s+")
        else:
            position = 0
            for number in _NUMBER.finditer(token):
                parts.append(re.escape(token[position : number.start()]))
                parts.append(f"({_NUMBER.pattern})")
                numbers.append(number.group())
                position = number.end()
            parts.append(re.escape(token[position:]))
    return re.compile("".join(parts)), numbers


def _number_matches(expected: str, actual: str) -> bool:
    if not re.search(r"[.eE]", expected):
        return expected.lstrip("+") == actual.lstrip("+")
    mantissa = re.split(r"[eE]", expected)[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(re.split(r"[eE]", expected)[1]) if re.search(r"[eE]", expected) else 0
    unit = 10.0 ** (exponent - decimals)
    # one unit in the last printed place, plus the rounding of the comparison itself
    return math.isclose(float(expected), float(actual), rel_tol=0, abs_tol=unit * (1 + 1e-9))


def line_matches(expected: str, actual: str) -> bool:
    """Whether a printed line matches an expected line (numbers within their printed precision)."""
    pattern, numbers = _line_pattern(expected)
    match = pattern.fullmatch(actual.strip())
    return match is not None and all(
        _number_matches(want, got) for want, got in zip(numbers, match.groups(), strict=True)
    )


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """Whether printed lines match expected ones; an expected ``...`` line matches any lines."""
    expected = [line for line in expected if line.strip()]
    actual = [line for line in actual if line.strip()]
    if not expected:
        return not actual
    if expected[0].strip() == "...":
        return any(output_matches(expected[1:], actual[skip:]) for skip in range(len(actual) + 1))
    return (
        bool(actual)
        and line_matches(expected[0], actual[0])
        and output_matches(expected[1:], actual[1:])
    )


# -- running the blocks ---------------------------------------------------------------------


def _commands(block: Block) -> list[list[str]]:
    """The commands of a shell block, each as the arguments of a subprocess."""
    commands = []
    for raw in block.body:
        line = raw.strip()
        if block.language == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        for command in line.split("&&"):
            words = shlex.split(command, comments=True)
            if not words:
                continue
            if words[0] == "kernelmaps":
                commands.append([sys.executable, "-m", "kernelmaps", *words[1:]])
            elif words[0] in ("python", "python3"):
                commands.append([sys.executable, *words[1:]])
            else:
                pytest.fail(
                    f"{block.where}: runs {words[0]!r}; a runnable shell block runs only "
                    "kernelmaps or python; mark the block not-run"
                )
    return commands


def _run_shell(block: Block, folder: Path) -> str:
    environment = {key: value for key, value in os.environ.items() if key != "KERNELMAPS_DATA"}
    printed = []
    for command in _commands(block):
        done = subprocess.run(
            command,
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            timeout=_CLI_TIMEOUT_S,
            check=False,
        )
        shown = shlex.join(
            ["kernelmaps", *command[3:]] if command[1:3] == ["-m", "kernelmaps"] else command
        )
        assert done.returncode == 0, f"{block.where}: `{shown}` failed:\n{done.stderr[-2000:]}"
        printed.append(done.stdout)
    return "".join(printed)


def _run_python(block: Block, namespace: dict[str, object]) -> str:
    stdout = io.StringIO()
    code = compile("\n".join(block.body) + "\n", block.where, "exec")
    with contextlib.redirect_stdout(stdout):
        exec(code, namespace)  # the documentation's own examples
    return stdout.getvalue()


def _missing_modules(blocks: list[Block]) -> list[str]:
    needed = {name for block in blocks if block.kind == "runnable" for name in block.needs()}
    return sorted(name for name in needed if importlib.util.find_spec(name) is None)


def run_page(page: Path, folder: Path) -> list[str]:
    """Run a page's runnable blocks in order; the mismatches of their outputs.

    With ``KERNELMAPS_UPDATE_DOCS=1`` the output blocks that do not match are rewritten.
    """
    blocks = parse_blocks(page)
    namespace: dict[str, object] = {"__name__": "__main__"}
    printed = ""
    mismatches: list[tuple[Block, str]] = []
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        for block in blocks:
            if block.kind == "runnable":
                printed = (
                    _run_python(block, namespace)
                    if block.language == "python"
                    else _run_shell(block, folder)
                )
            elif block.kind == "output" and not output_matches(block.body, printed.splitlines()):
                mismatches.append((block, printed))
    finally:
        os.chdir(cwd)
    if os.environ.get("KERNELMAPS_UPDATE_DOCS") == "1" and mismatches:
        _rewrite(page, mismatches)
    return [
        f"{block.where}: the output differs; it printed\n{printed}expected\n"
        + "\n".join(block.body)
        for block, printed in mismatches
    ]


def _rewrite(page: Path, mismatches: list[tuple[Block, str]]) -> None:
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    for block, printed in sorted(mismatches, key=lambda item: -item[0].start):
        new = [line.rstrip() + "\n" for line in printed.rstrip("\n").splitlines()]
        lines[block.start : block.end] = new
    page.write_text("".join(lines), encoding="utf-8")


# -- the tests ------------------------------------------------------------------------------


def _page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _has_runnable(page: Path) -> bool:
    return any(block.kind == "runnable" for block in parse_blocks(page))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_block_is_marked(page: Path) -> None:
    problems = marker_problems(parse_blocks(page))
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("page", [page for page in PAGES if _has_runnable(page)], ids=_page_id)
def test_page_runs_as_printed(page: Path, tmp_path: Path) -> None:
    missing = _missing_modules(parse_blocks(page))
    if missing:
        pytest.skip(f"{_page_id(page)} needs {', '.join(missing)}, which is not installed")
    mismatches = run_page(page, tmp_path)
    assert not mismatches, "\n\n".join(mismatches)


def test_output_comparison() -> None:
    assert line_matches("held-out accuracy 0.9461", "held-out accuracy 0.9462")
    assert not line_matches("held-out accuracy 0.9461", "held-out accuracy 0.9463")
    assert line_matches("gamma = 4.49e-04, D = 1024", "gamma = 4.48e-04,  D = 1024")
    assert not line_matches("D = 1024", "D = 1023")
    assert line_matches("fitted in ... s; R^2 = 0.93", "fitted in 4.6 s; R^2 = 0.93")
    assert output_matches(["a", "...", "b 1"], ["a", "x", "y", "b 1"])
    assert not output_matches(["a", "b"], ["a", "b", "c"])
