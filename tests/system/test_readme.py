"""The README a newcomer reads (issue 39): at most 400 lines, every link to a
file of the tree that exists (and a heading in it, for a #fragment), every
reference in docs/ reachable from it, and its five-minute tour run as it is
written. The tour's `$ ` lines run in bash (`make run` in the tree, at a
pseudo-terminal, as a newcomer's first terminal; the others in a directory
of their own whose `build` is the tree's build, so the files the tour writes
stay out of the tree), its `pmuos> ` lines are typed at the card's prompt,
and the lines shown after a command must appear in its output in that
order: numbers may differ, `...` stands for anything."""
import os
import re
import subprocess

import pexpect

from conftest import BUILD, ROOT, check_card_gone, default_cpu, knc_report_lines

README = os.path.join(ROOT, "README.md")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def readme():
    with open(README) as f:
        return f.read()


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_is_short_and_every_link_resolves():
    text = readme()
    assert text.count("\n") <= 400, f"README.md has {text.count(chr(10))} lines: at most 400"
    links = LINK.findall(text)
    assert links, "no links"
    for target in links:
        assert not re.match(r"\w+:", target), f"{target}: a link out of the tree cannot be checked here"
        path, _, frag = target.partition("#")
        full = os.path.join(ROOT, path)
        assert os.path.isfile(full), f"README links to {target}: no such file"
        if frag:
            with open(full) as f:
                anchors = {slug(h) for h in re.findall(r"^#+ (.*)$", f.read(), re.M)}
            assert frag in anchors, f"README links to {target}: no such heading"
    docs = {f"docs/{f}" for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")}
    missing = docs - {t.partition("#")[0] for t in links}
    assert not missing, f"docs the README does not lead to: {sorted(missing)}"


def tour():
    """[(where, command, shown lines)]: where is 'host' for `$ `, 'card' for `pmuos> `."""
    section = readme().split("\n## A five-minute tour\n", 1)[1].split("\n## ", 1)[0]
    lines, steps, i, block = section.split("\n"), [], 0, False
    while i < len(lines):
        line = lines[i]
        m = re.match(r"    (\$|pmuos>) (.*)$", line)
        if m:
            cmd = m[2]
            here = re.search(r"<<'(\w+)'$", cmd)
            if here:  # a here-document: its lines, up to the word, are the command's
                while lines[i + 1] != "    " + here[1]:
                    i += 1
                    cmd += "\n" + lines[i][4:]
                i += 1
                cmd += "\n" + here[1]
            steps.append(("host" if m[1] == "$" else "card", cmd, []))
            block = True
        elif line.startswith("    ") and block:
            if line.strip():
                steps[-1][2].append(line[4:])
        elif line.strip():
            block = False  # prose ends a code block: what follows is no command's output
        i += 1
    return steps


def pattern(shown):
    """A shown line as a regex: its numbers any numbers, its spaces any spaces, `...` anything."""
    out = []
    for part in re.split(r"(\.\.\.|\d[\d,.]*|\s+)", shown.strip()):
        if part == "...":
            out.append(".*")
        elif re.fullmatch(r"\d[\d,.]*", part):
            out.append(r"\d[\d,.]*")
        elif part.isspace():
            out.append(r"\s+")
        elif part:
            out.append(re.escape(part))
    return re.compile(r"^\s*" + "".join(out) + r"\s*$")


def check_shown(cmd, shown, output):
    """Each shown line, `...` lines skipped, matches a line of output after the one before's."""
    got = output.replace("\r\n", "\n").split("\n")
    at = 0
    for s in shown:
        if s.strip() == "...":
            continue
        p = pattern(s)
        while at < len(got) and not p.match(got[at]):
            at += 1
        assert at < len(got), f"`{cmd}`: no line like\n  {s}\nin order in its output:\n{output}"
        at += 1


def test_pattern_frees_numbers_and_keeps_words():
    p = pattern("    48.28%  __adddf3")
    assert p.match("    12.50%  __adddf3") and not p.match("    48.28%  __muldf3")
    assert pattern("# 2 samples, program .../x.elf").match("# 20 samples, program /a/b/x.elf")
    assert not pattern("9,876      cycles").match("9,876      instructions")


def test_the_tour_runs_as_written(tmp_path):
    steps = tour()
    assert [s[1] for s in steps][:2] == ["make run", "cpus"], steps
    assert any("pmuos-cc" in c for _, c, _ in steps) and any(c.startswith("build/pmuctl record") for _, c, _ in steps)
    name = f"tour{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    env.update(CARD=name, PMUOS_CARD=name, BUILD=os.path.relpath(BUILD, ROOT), CPU=default_cpu())
    os.symlink(BUILD, tmp_path / "build")
    card = pexpect.spawn("bash", ["-c", steps[0][1]], cwd=ROOT, env=env, encoding="utf-8", timeout=300)
    try:
        card.expect_exact("pmuos> ")
        check_shown(steps[0][1], steps[0][2], card.before)
        for where, cmd, shown in steps[1:]:
            if where == "card":
                card.sendline(cmd)
                if cmd == "poweroff":  # what ran, checked while the card's report of it is there
                    assert not knc_report_lines(name), "the tour ran instructions a KNC core lacks"
                    card.expect(pexpect.EOF)
                else:
                    card.expect_exact("pmuos> ")
                check_shown(cmd, shown, card.before)
                continue
            p = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=300)
            assert p.returncode == 0, f"`{cmd}` ended with status {p.returncode}:\n{p.stdout}"
            check_shown(cmd, shown, p.stdout)
    finally:
        if card.isalive():
            card.terminate(force=True)
    card.wait()
    assert steps[-1][1] == "poweroff" and card.exitstatus == 0, card.exitstatus
    check_card_gone(name)
    assert (tmp_path / "calls.svg").stat().st_size > 1000
