"""Pictures of a run (issue 26.4): pmuctl report --svg writes a flame graph
(host/flame.c, flamegraph.pl's SVG layout), pmuctl stat -I --plot a line
chart (host/plot.c, gnuplot's svg terminal). Each is rendered in headless
Chromium (Debian's chromium) and the screenshot checked: not one colour, and
the flame graph's widest boxes drawn with the hottest function's colours;
the hottest frame's name (from report's own table) is in the file."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, Card

PMUCTL = os.path.join(BUILD, "pmuctl")
USER = os.path.join(BUILD, "user")
CHROMIUM = shutil.which("chromium")
Image = pytest.importorskip("PIL.Image", reason="python3-pil (scripts/install-deps.sh)")


@pytest.fixture(scope="module")
def card():
    c = Card(cpus=2, timeout=120)
    yield c
    c.close()


def pmuctl(card, *args):
    p = subprocess.run([PMUCTL, "--card", card.name, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p


def screenshot(path, tmp_path, size=(1200, 700)):
    """Chromium's rendering of `path` (its own profile dir, no network): the PIL image."""
    assert CHROMIUM, "chromium is not installed (scripts/install-deps.sh)"
    png = tmp_path / (os.path.basename(path) + ".png")
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={tmp_path / 'chromium'}", f"--window-size={size[0]},{size[1]}",
                    f"--screenshot={png}", f"file://{path}"], capture_output=True, timeout=120, check=True)
    return Image.open(png).convert("RGB")


def colours(img):
    return {c for _, c in img.getcolors(maxcolors=1 << 20)}


def test_flame_graph_renders_with_the_hottest_frame(card, tmp_path):
    data = tmp_path / "calls.data"
    pmuctl(card, "record", "-g", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "20000", "-C", "1", "-o", str(data),
           "--", os.path.join(USER, "calls.elf"), "1000000")
    top = re.search(r"^\s+[\d.]+%\s+(\S+)$", pmuctl(card, "report", "-i", str(data)).stdout, re.M)[1]
    assert top == "b"  # calls.c: b runs half of the work
    svg = tmp_path / "calls.svg"
    pmuctl(card, "report", "-i", str(data), "--svg", str(svg))
    text = svg.read_text()
    titles = re.findall(r"<title>(\S+) \((\d+) samples", text)
    names = {n for n, _ in titles}
    assert {"all", "calls.elf", "_start", "main", "a", "b", "c", top} <= names, names
    assert f">{top}</text>" in text  # b's box is wide enough for its name
    img = screenshot(str(svg), tmp_path)
    assert len(colours(img)) > 20, "the rendering is (nearly) one colour"
    # b's box: its fill is drawn in the picture
    fill = re.search(r"<title>b \(.*?fill=\"rgb\((\d+),(\d+),(\d+)\)", text, re.S).groups()
    assert tuple(map(int, fill)) in colours(img)


def test_interval_plot_renders(card, tmp_path):
    out = tmp_path / "steady.svg"
    p = pmuctl(card, "stat", "-I", "50", "-x", ",", "-e", "INSTRUCTIONS_EXECUTED:u,CPU_CLK_UNHALTED",
               "--plot", str(out), "--", os.path.join(USER, "steady.elf"), "6000")
    assert len([l for l in p.stdout.splitlines() if "INSTRUCTIONS_EXECUTED:u" in l]) >= 3, p.stdout
    text = out.read_text()
    assert "INSTRUCTIONS_EXECUTED:u" in text and "CPU_CLK_UNHALTED" in text
    img = screenshot(str(out), tmp_path, (1000, 600))
    assert len(colours(img)) > 20, "the rendering is (nearly) one colour"
    # gnuplot's first two line colours (its default linetype colours)
    dark = sum(1 for c in img.getdata() if c != (255, 255, 255))
    assert dark > 1000


def test_plot_needs_intervals(card, tmp_path):
    p = subprocess.run([PMUCTL, "--card", card.name, "stat", "-e", "INSTRUCTIONS_EXECUTED:u", "--plot",
                        str(tmp_path / "x.svg"), "--", os.path.join(USER, "hello.elf")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "give -I MS too" in p.stderr
