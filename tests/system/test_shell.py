"""Shell input handling: errors, line editing, garbage (issue: boot, shell)."""
import random

from conftest import PROMPT
from mbox import layout

LINE_MAX = layout()["const"]["MBOX_SHELL_LINE_CAP"] - 1  # characters: the capacity less the NUL


def test_unknown_command_names_it(card):
    assert card.cmd("frobnicate now") == \
        "error: unknown command 'frobnicate' (type 'help' for the list)\n"


def test_bad_arguments_get_one_line_errors(card):
    out = card.cmd("cpus extra")
    assert out.startswith("error: cpus:") and out.count("\n") == 1
    assert card.cmd("sleep soon") .startswith("error: sleep: 'soon' is not a number")
    assert card.cmd("debug fault 999").startswith("error: debug: no CPU 999 (CPUs are 0-3)")
    assert card.cmd("debug fault x").startswith("error: debug: 'x' is not a CPU number")
    assert card.cmd("debug explode 1").startswith("error: debug: unknown action 'explode'")
    assert card.cmd("help nothing").startswith("error: help: unknown command 'nothing'")


def test_backspace_and_ctrl_u_edit_the_line(card):
    # "echX" + BS + "o hi" -> "echo hi"; DEL works like BS.
    assert card.cmd("echX\bo hi\x7f\x7fyo") == "yo\n"
    # Ctrl-U throws away what was typed so far.
    assert card.cmd("garbage words\x15echo clean") == "clean\n"


def test_crlf_and_lf_each_end_one_line(card):
    card.send_raw(b"echo one\r\necho two\n")
    out = card.sync()
    # Exactly three prompts: after "one", after "two", after the sync line's echo;
    # an extra one would mean the LF of the CRLF counted as an empty line.
    assert out.count("pmuos> ") == 2, out
    assert "\r\none\r\n" in out and "\r\ntwo\r\n" in out


def test_ten_thousand_characters(card):
    out = card.cmd("x" * 10000, timeout=120)
    assert out == f"error: line too long (10000 characters; at most {LINE_MAX}), ignored\n"
    assert card.cmd("echo still here") == "still here\n"


def test_control_bytes_and_binary_garbage(card):
    rnd = random.Random(1234)
    garbage = bytes(rnd.randrange(256) for _ in range(4096))
    card.send_raw(garbage + b"\x15\r")
    card.sync(120)
    ctrl = bytes(range(1, 32)) + b"\x1b[A\x1b[3~\x1bO\x7f\x00\xff"
    card.send_raw(ctrl * 50)
    card.sync()
    assert card.cmd("echo alive") == "alive\n"
    assert "4 CPUs, 4 online" in card.cmd("cpus")


def test_history_recalls_the_previous_line(card):
    card.cmd("echo first")
    # Up arrow brings back "echo first"; Enter runs it again.
    assert card.cmd("\x1b[A") == "first\n"
