"""pmuctl's command line as a newcomer meets it (issue 25): the README's path from a fresh
clone, help without a card, --version, the man page and the bash completion from the
command table, --card=NAME and PMUOS_CARD, make install."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT, Card

PMUCTL = os.path.join(BUILD, "pmuctl")
COMMANDS = ["info", "events", "stat", "record", "report", "annotate", "run", "ping", "reset", "boot", "console", "help"]
NO_CARD = dict(os.environ, PMUOS_CARD="nosuch-card-for-help")


def run(*args, env=NO_CARD, **kw):
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, **kw)


@pytest.fixture(scope="module")
def card():
    c = Card(cpus=4)
    yield c
    c.close()


def test_make_run_in_a_fresh_clone_builds_pmuctl(tmp_path):
    """The README's first step, in a clone (the tracked files only, no build/): `make run` builds
    pmuctl beside the card, and says before the long newlib build what it is and how long it
    takes. make -n: the commands only, not a second full build."""
    clone = tmp_path / "clone"
    files = run("git", "-C", ROOT, "ls-files", "-z").stdout.split("\0")
    for f in filter(None, files):
        if os.path.isfile(os.path.join(ROOT, f)):
            os.makedirs(clone / os.path.dirname(f), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, f), clone / f)
    env = {k: v for k, v in os.environ.items() if k not in ("BUILD", "MAKEFLAGS", "MAKELEVEL")}
    p = run("make", "-n", "run", cwd=clone, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    assert re.search(r"^make .*\bkernel user host\b", p.stdout, re.M), p.stdout[:2000]
    assert re.search(r"-o build/pmuctl\b", p.stdout), "make run does not link build/pmuctl"
    assert re.search(r"newlib: building the C library .* once \(about \d+ minutes? ", p.stdout), p.stdout[:3000]


def test_help_needs_no_card():
    for args in (["--help"], ["-h"], ["help"]):
        p = run(PMUCTL, *args)
        assert p.returncode == 0 and p.stdout.startswith("usage: pmuctl"), (args, p.stderr)
        for c in COMMANDS:
            assert re.search(rf"^  {c} ", p.stdout, re.M), (args, c)
    for c in COMMANDS:
        for args in ([c, "--help"], [c, "-h"], ["help", c]):
            p = run(PMUCTL, *args)
            assert p.returncode == 0 and p.stdout.startswith(f"usage: pmuctl "), (args, p.stdout, p.stderr)
            assert f" {c}" in p.stdout.splitlines()[0] and "no card at" not in p.stderr, (args, p.stderr)
    p = run(PMUCTL, "stat", "--help")
    assert re.search(r"^  -e, --event=EV", p.stdout, re.M) and "--json" in p.stdout, p.stdout


def test_version_and_bad_arguments():
    version = re.search(r"^VERSION := (\S+)", open(os.path.join(ROOT, "Makefile")).read(), re.M)[1]
    p = run(PMUCTL, "--version")
    assert p.returncode == 0 and p.stdout == f"pmuctl {version}\n"
    p = run(PMUCTL, "frob")
    assert p.returncode == 2 and "unknown command 'frob'" in p.stderr
    p = run(PMUCTL, "stat", "--frob", "--", "x.elf")
    assert p.returncode == 2 and "pmuctl stat: unknown option '--frob'" in p.stderr and "no card" not in p.stderr
    p = run(PMUCTL, "stat", "-e")
    assert p.returncode == 2 and "option -e needs EV[,EV...]" in p.stderr
    p = run(PMUCTL)
    assert p.returncode == 2 and "usage: pmuctl" in p.stderr
    for bad in ("0", "3601", "x"):
        p = run(PMUCTL, "--stale-after", bad, "info")
        assert p.returncode == 2 and f"--stale-after {bad}: " in p.stderr and "1 to 3600" in p.stderr, p.stderr


def test_man_page_shows_every_command_and_option():
    page = os.path.join(BUILD, "pmuctl.1")
    p = run("man", "-l", "-P", "cat", page, env=dict(NO_CARD, MANWIDTH="200"))
    assert p.returncode == 0 and "pmuctl - drive a pmuos card" in p.stdout, p.stderr
    text = re.sub(r".\x08", "", p.stdout)
    helptext = run(PMUCTL, "--help").stdout
    for c in COMMANDS:
        assert re.search(rf"^   {c}\b", text, re.M), c
        for long in re.findall(r"--([a-z-]+)", run(PMUCTL, "help", c).stdout):
            assert f"--{long}" in text, (c, long)
    assert "PMUOS_CARD" in text and "--version" in helptext


def bash_complete(words):
    script = (f"source {BUILD}/pmuctl.bash; complete -p pmuctl; COMP_WORDS=({' '.join(words)}); "
              f"COMP_CWORD={len(words) - 1}; _pmuctl; echo \"${{COMPREPLY[*]}}\"")
    return run("bash", "-c", script)


def test_bash_completion():
    p = bash_complete(["pmuctl", "st"])
    assert p.returncode == 0 and p.stdout.splitlines() == ["complete -F _pmuctl pmuctl", "stat"], p.stdout + p.stderr
    assert bash_complete(["pmuctl", "--card", "x", "stat", "--sp"]).stdout.splitlines()[1] == "--spflt"
    assert bash_complete(["pmuctl", "--ver"]).stdout.splitlines()[1] == "--version"


def test_make_install_with_prefix(tmp_path):
    env = dict(os.environ, BUILD=BUILD)
    p = run("make", "--no-print-directory", "-C", ROOT, "install", f"PREFIX={tmp_path}/usr", env=env)
    assert p.returncode == 0, p.stderr
    for f in ("bin/pmuctl", "share/man/man1/pmuctl.1", "share/bash-completion/completions/pmuctl"):
        assert os.path.isfile(tmp_path / "usr" / f), f
    assert run(str(tmp_path / "usr/bin/pmuctl"), "--version").returncode == 0


def test_the_card_is_named_three_ways(card):
    for args, env in ((["--card", card.name], NO_CARD), ([f"--card={card.name}"], NO_CARD),
                      ([], dict(os.environ, PMUOS_CARD=card.name))):
        p = run(PMUCTL, *args, "info", env=env)
        assert p.returncode == 0 and f"/dev/shm/pmuos-{card.name}" in p.stdout, (args, p.stderr)
    # --card wins over PMUOS_CARD
    p = run(PMUCTL, "--card", card.name, "info", env=dict(os.environ, PMUOS_CARD="nosuch"))
    assert p.returncode == 0, p.stderr
    p = run(PMUCTL, "info", env=dict(os.environ, PMUOS_CARD="nosuch-card"))
    assert p.returncode == 1 and "no card at /dev/shm/pmuos-nosuch-card" in p.stderr


def test_perfs_generic_events_are_the_knc_events_linux_counts_for_them():
    """Linux arch/x86/events/intel/knc.c, knc_perfmon_event_map: the codes perf's generic events
    count on KNC. pmuctl maps the names to libpfm4's KNC names; libpfm4 gives the codes."""
    linux = {"cycles": 0x2a, "instructions": 0x16, "cache-references": 0x28, "cache-misses": 0x29,
             "branches": 0x12, "branch-misses": 0x2b}
    p = run(PMUCTL, "events", "--json")
    assert p.returncode == 0, p.stderr
    events = {o["name"]: o for o in map(json.loads, p.stdout.splitlines())}
    assert len(events) > 50 and all(isinstance(o["description"], str) for o in events.values())
    for name, code in linux.items():
        assert int(events[name]["code"], 16) == code, name
        assert int(events[events[name]["alias-of"]]["code"], 16) == code, name


def test_console_edits_lines_at_a_terminal(card):
    """At a terminal the console reads through libedit: the Up arrow recalls the last line (no
    escape sequence reaches the card's shell), Ctrl-D ends it."""
    import pexpect
    child = pexpect.spawn(PMUCTL, ["--card", card.name, "console"], encoding="utf-8", timeout=30)
    prompt = f"pmuos({card.name})> "
    child.expect_exact(prompt)
    child.send("echo recalled\r")
    child.expect_exact(prompt)
    first = child.before
    child.send("\x1b[A\r")  # Up, Enter
    child.expect_exact(prompt)
    assert first.count("recalled") >= 1 and "recalled" in child.before, (first, child.before)
    assert "unknown command" not in first + child.before and "\x1b[A" not in child.before
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_events_say_which_the_card_counts(card):
    """`pmuctl events` asks the card which events its PMU backend counts (EVENTS_COUNTED): the same
    ones its shell's `pmu events` does not mark "not counted by this backend". Without a card it
    lists them without that column and says why."""
    card.sync()  # what earlier tests had the card print (the console's lines) is not the table's
    shell = {m[1]: "not counted by this backend" not in m[0]
             for m in re.finditer(r"^([A-Z0-9_]+)\s+umask 0x.*$", card.cmd("pmu events"), re.M)}
    p = run(PMUCTL, "--card", card.name, "events", "--json")
    assert p.returncode == 0, p.stderr
    rows = {o["name"]: o for o in map(json.loads, p.stdout.splitlines())}
    assert {n: o["counted"] for n, o in rows.items() if n in shell} == shell
    assert len(shell) > 50 and any(shell.values()) and not all(shell.values())
    assert rows["instructions"]["counted"] == shell["INSTRUCTIONS_EXECUTED"]
    p = run(PMUCTL, "--card", card.name, "events", "INSTRUCTIONS_EXECUTED")
    assert p.returncode == 0 and re.search(r"^INSTRUCTIONS_EXECUTED\s+0x0016\s+counted\s", p.stdout, re.M), p.stdout
    p = run(PMUCTL, "events", "--json")
    assert p.returncode == 0 and "no card to ask, so no column" in p.stderr
    assert not any("counted" in json.loads(l) for l in p.stdout.splitlines())


def test_events_match_ignoring_case_and_say_when_nothing_does():
    """`pmuctl events PATTERN` finds names holding PATTERN in any case, perf's generic names
    among them; a pattern nothing holds is an error (status 1) naming the closest names."""
    p = run(PMUCTL, "events", "cache")
    assert p.returncode == 0 and re.search(r"^CODE_CACHE_MISS\s", p.stdout, re.M) and \
        re.search(r"^cache-misses\s", p.stdout, re.M), p.stdout
    p = run(PMUCTL, "events", "cache-mis")
    assert p.returncode == 0 and re.search(r"^cache-misses\s+0x0029\s+perf's generic event: DATA_READ_MISS_OR_WRITE_MISS$",
                                           p.stdout, re.M), p.stdout
    assert run(PMUCTL, "list", "cache-mis").stdout == p.stdout  # perf's name for it
    p = run(PMUCTL, "events", "cache-mises")
    assert p.returncode == 1 and p.stdout == "", p.stdout
    assert "events: no event name holds 'cache-mises' (matched ignoring case); closest: cache-misses, " in p.stderr, \
        p.stderr


@pytest.mark.parametrize("args, says", [
    (["report", "extra"], "pmuctl report: unexpected argument 'extra'"),
    (["annotate"], "pmuctl annotate: no function to annotate"),
    (["annotate", "f", "g"], "pmuctl annotate: one function at a time; unexpected argument 'g'"),
    (["events", "a", "b"], "pmuctl events: one pattern at a time; unexpected argument 'b'"),
])
def test_a_usage_error_names_the_argument(args, says):
    """Every usage error names what pmuctl could not take, then the usage (status 2)."""
    p = run(PMUCTL, *args)
    assert p.returncode == 2 and p.stderr.startswith(says + "\nusage: pmuctl "), p.stderr
