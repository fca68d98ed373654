"""The design lives in the repository (docs/design.md) and a clone needs
nothing outside it: no path out of the tree, no citation of the old design
document or of the reference texts by their file numbers, and every
`docs/design.md §N` cited anywhere names a section that exists. Reads the
tracked files through git grep; no QEMU."""
import os
import re
import subprocess

import pytest

from conftest import ROOT

DESIGN = os.path.join(ROOT, "docs", "design.md")
SELF = os.path.relpath(__file__, ROOT)

# What a clone cannot follow: a path to the shared directory beside the
# tree, the old design document's sections, and the reference texts by
# their file numbers ("000 §1.4.3", "000 Table 1-6", "seed 004"). The KNC
# PMU manual is cited as "327357-001 §x.y" instead.
STALE = [
    (r"\.\./shared", "a path outside the repository"),
    (r"\bDESIGN\b", "the old design document (docs/design.md §N instead)"),
    (r"\b000 (§|Table)", "the KNC PMU manual by file number (327357-001 instead)"),
    (r"\bseeds? 00[0-9]", "a reference text by file number (its title or number instead)"),
    (r"\bthe seed's\b", "a reference text as 'the seed' (its title or number instead)"),
]

CITATION = re.compile(r"docs/design\.md §([0-9]+(?:\.[0-9]+)*)")
HEADING = re.compile(r"^#+\s+§([0-9]+(?:\.[0-9]+)*)\s", re.M)


def git_grep(pattern, *extra):
    """Lines `file:line:text` of tracked files matching the extended regex, this file left out."""
    if not os.path.isdir(os.path.join(ROOT, ".git")) and not os.path.isfile(os.path.join(ROOT, ".git")):
        pytest.skip("not a git work tree")
    r = subprocess.run(["git", "grep", "-n", "-I", "-P", *extra, "-e", pattern, "--", ".", f":!{SELF}"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout.splitlines()


def design_sections(text):
    return set(HEADING.findall(text))


@pytest.mark.parametrize("pattern,what", STALE, ids=[w.split(" (")[0] for _, w in STALE])
def test_no_reference_outside_the_tree(pattern, what):
    hits = git_grep(pattern)
    assert not hits, f"{what}:\n" + "\n".join(hits)


def test_design_exists_with_the_old_section_numbers():
    """§1-§9 keep the first design's topics, so every old citation maps to the same number."""
    with open(DESIGN) as f:
        have = design_sections(f.read())
    want = {"1", "2", "3", "4", "5", "5.1", "5.2", "5.3", "5.4", "5.5", "5.6", "6", "7", "8", "9"}
    assert want <= have, f"docs/design.md lacks sections {sorted(want - have)}"


def test_every_cited_section_exists():
    with open(DESIGN) as f:
        have = design_sections(f.read())
    missing = []
    for line in git_grep(r"docs/design\.md §[0-9]"):
        for n in CITATION.findall(line):
            if n not in have:
                missing.append(f"{line.strip()}  (no §{n})")
    assert not missing, "citations of docs/design.md sections it does not have:\n" + "\n".join(missing)


def test_checker_finds_a_bad_citation():
    """The section parser itself: headings with § are found, a cited number
    that is not a heading is not, and a sentence's full stop is not part of
    the number."""
    text = "# pmuos\n## §5 The PMU\n### §5.4 PMI handler\ntext §7 in prose\n"
    have = design_sections(text)
    assert have == {"5", "5.4"}
    assert CITATION.findall("see docs/design.md §5.4.") == ["5.4"]
    assert CITATION.findall("(docs/design.md §5.) and docs/design.md §7") == ["5", "7"]
    assert "7" not in have
