"""What pmuctl shows people (issue 26.4, 26.5), on one card.

Named regions in pmuctl stat (likwid's marker API): the lines
pmu_region_begin/end write at exit (user/regions.c) are taken out of the
program's output and printed per region with the events' names, calls and
the -M groups' metrics (host/regions.c). Program regions: "sum" (3 calls),
"mix" (2 calls), "empty" (4 calls, the markers' own cost); with `spflt NAME`
the same calls run between SPFLT 1 and 0 without markers; `times N` runs it
all N times. While the events take turns on the counters (-M L1's six) the
regions read the kernel's multiplexed totals (SYS_PMU_COUNTS) and pmuctl
scales them.

Pictures: pmuctl report --svg writes a flame graph (host/flame.c,
flamegraph.pl's SVG layout), pmuctl stat -I --plot a line chart
(host/plot.c, gnuplot's svg terminal). Each is rendered in headless Chromium
(Debian's chromium) and the screenshot checked: not one colour, the
hottest function's box drawn in its colour; the hottest frame's name (from
report's own table) is in the file."""
import json
import os
import re
import shutil
import subprocess

from conftest import BUILD

PMUCTL = os.path.join(BUILD, "pmuctl")
USER = os.path.join(BUILD, "user")
PROG = os.path.join(USER, "regions.elf")
CHROMIUM = shutil.which("chromium")
CALLS = {"sum": 3, "mix": 2, "empty": 4}
EVENTS = ["INSTRUCTIONS_EXECUTED:u", "DATA_READ:u"]


def pmuctl(card, *args):
    p = subprocess.run([PMUCTL, "--card", card.name, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p


def csv_regions(out):
    """{region: {event or 'calls': count, 'time': seconds}} from stat -x , lines of regions."""
    regions = {}
    for line in out.splitlines():
        f = line.split(",")
        if len(f) == 4 and f[0] in CALLS:
            regions.setdefault(f[0], {})[f[3]] = float(f[1]) if f[3] == "time" else int(f[1])
    return regions


def test_regions_equal_spflt_counts_of_the_same_work(card):
    p = pmuctl(card, "stat", "-x", ",", "-e", ",".join(EVENTS), "--", PROG)
    assert "region " not in p.stdout  # taken out of the program's output
    regions = csv_regions(p.stderr)  # perf's place for -x
    assert {r: regions[r]["calls"] for r in regions} == CALLS, p.stderr
    assert all(regions[r]["time"] > 0 for r in CALLS), regions  # the calls' TSC time
    spflt = {}
    for r in CALLS:
        q = pmuctl(card, "stat", "--spflt", "-x", ",", "-e", ",".join(EVENTS), "--", PROG, "spflt", r)
        spflt[r] = {f.split(",")[2]: int(f.split(",")[0]) for f in q.stderr.splitlines() if f.count(",") == 4}
    for ev in EVENTS:
        # per call, the markers add the same code to every region: an empty region's count
        marker = regions["empty"][ev] / CALLS["empty"] - spflt["empty"][ev] / CALLS["empty"]
        assert marker > 0
        for r in ("sum", "mix"):
            assert regions[r][ev] == spflt[r][ev] + CALLS[r] * marker, (r, ev, regions, spflt)
    assert spflt["sum"]["DATA_READ:u"] >= 3 * 4096  # sum_words' loads


def test_regions_per_cpu_and_metric_only(card):
    """-A: besides the total, a table per CPU that ran the region (likwid's region per thread),
    whose counts add up to it; --metric-only: a region's metrics alone, as the run's."""
    p = pmuctl(card, "stat", "-A", "-C", "1-2", "-x", ",", "-e", ",".join(EVENTS), "--", PROG)
    rows = [l.split(",") for l in p.stderr.splitlines()]
    total = {r[3]: int(r[1]) for r in rows if len(r) == 4 and r[0] == "sum" and r[3] != "time"}
    cpus = {}
    for r in rows:
        if len(r) == 5 and r[1] == "sum" and r[4] != "time":
            cpus.setdefault(r[0], {})[r[4]] = int(r[2])
    assert sorted(cpus) == ["CPU1", "CPU2"] and total["calls"] == 2 * CALLS["sum"], (total, cpus)
    for k in total:
        assert total[k] == cpus["CPU1"][k] + cpus["CPU2"][k], (k, total, cpus)
    t = pmuctl(card, "stat", "--metric-only", "-M", "CPI", "--", PROG).stderr
    part = t.split(" Region 'sum'")[1].split(" Region 'mix'")[0]
    assert "cycles/instruction CPI" in part and "INSTRUCTIONS_EXECUTED" not in part, part


def test_region_table_names_events_calls_and_metrics(card):
    p = pmuctl(card, "stat", "-M", "CPI", "--", PROG)
    table = p.stderr
    for r, n in CALLS.items():
        assert f" Region '{r}': {n} calls" in table, table
    part = table.split(" Region 'sum'")[1].split(" Region 'mix'")[0]
    assert re.search(r"\n +[\d,]+ +CPU_CLK_UNHALTED\n", part), part
    assert re.search(r"\n +[\d,]+ +INSTRUCTIONS_EXECUTED\n", part), part
    assert re.search(r"\n +[\d.]+ +CPI +cycles/instruction\n", part), part
    assert "counter0" not in table + p.stdout
    j = pmuctl(card, "stat", "-M", "CPI", "--json", "--", PROG)
    objs = [json.loads(line) for line in j.stderr.splitlines() if line.startswith("{")]
    regions = {o["region"]: o for o in objs if "region" in o}
    assert not any("region" in o for o in objs if "event" in o)  # perf's objects stay as they are
    assert {r: o["calls"] for r, o in regions.items()} == CALLS
    events = regions["sum"]["events"]
    assert set(events) == {"CPU_CLK_UNHALTED", "INSTRUCTIONS_EXECUTED"} and all(int(v) > 0 for v in events.values())
    cpi = next(m for m in regions["sum"]["metrics"] if m["metric-unit"] == "cycles/instruction CPI")
    assert abs(float(cpi["metric-value"]) - int(events["CPU_CLK_UNHALTED"]) / int(events["INSTRUCTIONS_EXECUTED"])) < 1e-5


L1 = ["DATA_READ_OR_WRITE", "DATA_READ_MISS_OR_WRITE_MISS", "DATA_READ_MISS", "DATA_READ", "DATA_WRITE_MISS",
      "DATA_WRITE"]


def test_regions_while_events_take_turns_are_counted_and_scaled(card):
    """-M L1's six events take turns: each region reads the kernel's totals
    (SYS_PMU_COUNTS), and every event is counted and scaled as stat's."""
    times = 40  # a run of some ms: every pair of events has 1 ms turns inside sum's and mix's calls
    p = pmuctl(card, "stat", "-M", "L1", "--mux-interval", "1", "--", PROG, "times", str(times))
    for r, n in CALLS.items():
        assert f" Region '{r}': {n * times} calls" in p.stderr, p.stdout + p.stderr
    for r, end in (("sum", " Region 'mix'"), ("mix", " Region 'empty'")):
        part = p.stderr.split(f" Region '{r}'")[1].split(end)[0]
        for ev in L1:
            # a count, scaled and marked with its share of the time as stat marks it
            assert re.search(rf"\n +[\d,]+ +{ev} +\(\d+\.\d\d%\)\n", part), (ev, part)
        assert re.search(r"\n +[\d.]+ +L1 read miss ratio +%\n", part), part
        assert "take turns" not in part and "<not counted>" not in part, part


def test_regions_taking_turns_equal_spflt_counts_in_one_slice(card):
    """With a 1000 ms slice the whole run is the first slice, so its two
    events (INSTRUCTIONS_EXECUTED, DATA_READ_OR_WRITE) are on the counters
    in every region (100 %, unscaled) and the other four never (<not
    counted>); the two equal the SPFLT-gated
    counts of the same work (those two events alone,
    as SPFLT gating takes no events that take turns) plus the markers' cost
    per call (the empty region's), as the RDPMC regions do. Across slices
    the counts are the multiplexing's estimate, which no exact count
    matches."""
    # Ring 3 only (:u): the system calls' kernel work is no region's
    events = [ev + ":u" for ev in ["INSTRUCTIONS_EXECUTED"] + L1[:1] + L1[2:]]
    out = pmuctl(card, "stat", "-e", ",".join(events), "--mux-interval", "1000", "-x", ",", "--", PROG).stderr
    regions, pcnt = {}, {}
    for line in out.splitlines():
        f = line.split(",")
        if len(f) == 5 and f[0] in CALLS:
            pcnt.setdefault(f[0], {})[f[3]] = float(f[4])
            regions.setdefault(f[0], {})[f[3]] = int(f[1]) if f[1].isdigit() else None
        elif len(f) == 4 and f[0] in CALLS and f[3] == "calls":
            regions.setdefault(f[0], {})["calls"] = int(f[1])
    assert {r: regions[r]["calls"] for r in regions} == CALLS, out
    whole = [ev for ev in events if pcnt["sum"][ev] == 100.0]
    assert len(whole) == 2, pcnt
    for r in CALLS:
        assert all(regions[r][ev] is None and pcnt[r][ev] == 0.0 for ev in events if ev not in whole), (r, out)
    spflt = {}
    for r in CALLS:
        # SPFLT gating takes only events that stay on the counters: the first slice's two
        q = pmuctl(card, "stat", "--spflt", "-x", ",", "-e", ",".join(whole), "--", PROG, "spflt", r)
        spflt[r] = {f.split(",")[2]: int(f.split(",")[0]) for f in q.stderr.splitlines()
                    if f.count(",") >= 4 and f.split(",")[0].isdigit()}
    for ev in whole:
        marker = regions["empty"][ev] / CALLS["empty"] - spflt["empty"][ev] / CALLS["empty"]
        for r in ("sum", "mix"):
            expect = spflt[r][ev] + CALLS[r] * marker
            assert regions[r][ev] == expect, (r, ev, regions, spflt)
        assert marker > 0
    assert spflt["sum"][whole[0]] >= 3 * 4096  # sum_words' loads are reads (or writes) of data


def test_a_sampling_counter_is_reported_never_counted(card):
    """record samples counter 0: the region line says so (record leaves the program's
    output as it is), never the 40-bit reload value as a count."""
    p = pmuctl(card, "record", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "1000", "-o", os.devnull, "--", PROG)
    line = re.search(r"region sum: .*", p.stdout).group(0)
    assert line.startswith("region sum: calls 3, INSTRUCTIONS_EXECUTED:u sampling, counter1 "), line
    lines = [x for x in p.stdout.splitlines() if x.startswith("region ")]
    assert len(lines) == 3 and all("INSTRUCTIONS_EXECUTED:u sampling," in x for x in lines), p.stdout


def screenshot(path, tmp_path, size=(1200, 700)):
    """Chromium's rendering of `path` (its own profile dir, no network): the PIL image."""
    assert CHROMIUM, "chromium is not installed (scripts/install-deps.sh)"
    from PIL import Image  # python3-pil (scripts/install-deps.sh)
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


# gnuplot's first two line colours (its default linetype colours 1 and 2)
LT1, LT2 = (148, 0, 211), (0, 158, 115)


def svg_texts(text):
    """The words gnuplot's svg terminal writes (tick labels, axis labels, titles, legend)."""
    return [t.strip() for t in re.findall(r"<(?:text|tspan)[^>]*>([^<]+)", text) if t.strip()]


# A page that clicks in the flame graph as a person would (a frame, then Reset Zoom) and writes
# what each frame showed: {frame: [display, width, label]} after each click.
CLICKS = """<html><body><iframe id="f" src="%s" width="1200" height="200"></iframe><pre id="out"></pre><script>
document.getElementById('f').onload = function () {
  var d = this.contentDocument, out = {};
  function state() {
    var s = {};
    [].forEach.call(d.querySelectorAll('g.f'), function (g) {
      s[g.dataset.n] = [g.style.display, +g.querySelector('rect').getAttribute('width'),
                        g.querySelector('text').textContent];
    });
    return s;
  }
  function click(e) { e.dispatchEvent(new MouseEvent('click', {bubbles: true})); }
  click([].filter.call(d.querySelectorAll('g.f'), function (g) { return g.dataset.n === '%s'; })[0]
        .querySelector('rect'));
  out.zoomed = state();
  out.reset_zoom_shown = d.getElementById('unzoom').style.opacity;
  click(d.getElementById('unzoom'));
  out.reset = state();
  out.reset_zoom_after = d.getElementById('unzoom').style.opacity;
  document.getElementById('out').textContent = JSON.stringify(out);
};
</script></body></html>"""


def dom(url, tmp_path):
    """The document Chromium holds once `url` and its scripts ran."""
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                        f"--user-data-dir={tmp_path / 'chromium'}", "--virtual-time-budget=5000", "--dump-dom",
                        url], capture_output=True, text=True, timeout=120, check=True)
    return p.stdout


def test_flame_graph_zooms_searches_and_relabels(card, tmp_path):
    """flamegraph.pl's behaviour: a click on a box too narrow for its name zooms to it, its
    frames above stretched and labelled again, its callers at full width, the rest hidden; Reset
    Zoom goes back, labels cut again; Search colours the matches and says their share (?s=, as
    flamegraph.pl keeps the search in the address); the pictures looked at."""
    data = tmp_path / "calls.data"
    pmuctl(card, "record", "-g", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "20000", "-C", "1", "-o", str(data),
           "--", os.path.join(USER, "calls.elf"), "1000000")
    svg = tmp_path / "calls.svg"
    pmuctl(card, "report", "-i", str(data), "--svg", str(svg))
    frames = {n: (float(w), t) for w, n, t in re.findall(
        r'data-w="([\d.]+)" data-d="\d+" data-n="([^"]*)">.*?<text[^>]*>([^<]*)</text>', svg.read_text(), re.S)}
    # newlib's start-up is usually a box with no room for a label (a run with no sample there has none:
    # then the narrowest box, whose label must still fill the width once zoomed)
    unlabelled = [n for n in frames if frames[n][1] == ""]
    narrow = min(unlabelled or frames, key=lambda n: frames[n][0])
    assert frames["b"][1] == "b", frames
    page = tmp_path / "clicks.html"
    page.write_text(CLICKS % (svg.name, narrow))
    out = json.loads(re.search(r'<pre id="out">(.*)</pre>', dom(f"file://{page}", tmp_path))[1].replace("&quot;", '"'))
    zoomed, reset = out["zoomed"], out["reset"]
    assert zoomed[narrow] == ["", 1180, narrow], zoomed          # the full width, labelled
    assert zoomed["all"][:2] == ["", 1180] and zoomed["b"][0] == "none", zoomed
    assert out["reset_zoom_shown"] == "1" and out["reset_zoom_after"] == "0", out
    assert reset[narrow] == ["", frames[narrow][0], frames[narrow][1]] and reset["b"] == ["", frames["b"][0], "b"], reset
    searched = dom(f"file://{svg}?s=%5Eb%24", tmp_path)
    share = 100 * frames["b"][0] / frames["all"][0]
    assert f"Matched: {share:.1f}%" in searched and "Reset Search" in searched, searched[-600:]
    assert re.search(r'data-n="b".*?fill="rgb\(230,0,230\)"', searched, re.S)
    img = screenshot(f"{svg}?s=%5Eb%24", tmp_path, (1200, 180))
    assert (230, 0, 230) in colours(img), "the match drawn in the search's colour"


def test_interval_plot_renders(card, tmp_path):
    """One panel and y-axis per event, in events/s with a unit each (a rare event is not flat
    under a frequent one), human ticks (10, 0.2, not 25.000M), the last partial interval marked
    in the legend, not a cliff; with -A one line per CPU."""
    out = tmp_path / "steady.svg"
    p = pmuctl(card, "stat", "-I", "50", "-x", ",", "-e", "INSTRUCTIONS_EXECUTED:u,DATA_READ_MISS",
               "--plot", str(out), "--", os.path.join(USER, "steady.elf"), "6000")
    assert len([l for l in p.stderr.splitlines() if "INSTRUCTIONS_EXECUTED:u" in l]) >= 3, p.stderr
    words = svg_texts(out.read_text())
    assert "INSTRUCTIONS_EXECUTED:u" in words and "DATA_READ_MISS" in words, words
    assert "M events/s" in words and "k events/s" in words, words  # an axis each, its own unit
    assert any(re.fullmatch(r"last interval: \d+ ms of 50, its rate", w) for w in words), words
    ticks = [w for w in words if re.fullmatch(r"[\d.]+", w)]
    assert len(ticks) > 10 and not any(re.search(r"\.\d*0$|\.\d{3}", w) for w in ticks), ticks
    img = screenshot(str(out), tmp_path, (1000, 460))
    assert len(colours(img)) > 20, "the rendering is (nearly) one colour"
    top, bottom = img.crop((0, 0, 1000, 230)), img.crop((0, 230, 1000, 460))
    assert LT1 in colours(top) and LT1 in colours(bottom), "a line in each panel"
    out = tmp_path / "cpus.svg"
    pmuctl(card, "stat", "-I", "50", "-A", "-C", "1-2", "-x", ",", "-e", "INSTRUCTIONS_EXECUTED:u",
           "--plot", str(out), "--", os.path.join(USER, "steady.elf"), "3000")
    words = svg_texts(out.read_text())
    assert "CPU 1" in words and "CPU 2" in words, words
    img = screenshot(str(out), tmp_path, (1000, 270))
    assert {LT1, LT2} <= colours(img), "a line per CPU"


def test_plot_needs_intervals(card, tmp_path):
    p = subprocess.run([PMUCTL, "--card", card.name, "stat", "-e", "INSTRUCTIONS_EXECUTED:u", "--plot",
                        str(tmp_path / "x.svg"), "--", os.path.join(USER, "hello.elf")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "give -I MS too" in p.stderr


def test_counts_call_refuses_bad_pointers(card):
    """SYS_PMU_COUNTS and SYS_PMU_EVENT_NAMES with NULL, a kernel address, an unmapped page,
    read-only text and a record past the stack's top: -EFAULT each
    (user/programs/badcounts.c), the card still serves; a good pointer gets -M L1's six
    events, and their names, as stat's table names them."""
    p = pmuctl(card, "stat", "-M", "L1", "--", os.path.join(USER, "badcounts.elf"))
    assert [l for l in p.stdout.splitlines() if l.startswith(("bad", "good"))] == \
        [f"bad {i}: -14 -14" for i in range(5)] + ["good: 6"], p.stdout
    names = re.search(r"^events: 6 (.*)$", p.stdout, re.M)[1].split()
    assert len(set(names)) == 6 and all(re.search(rf" {n}( |$)", p.stderr, re.M) for n in names), (names, p.stderr)
    pmuctl(card, "stat", "-e", "INSTRUCTIONS_EXECUTED:u", "--", os.path.join(USER, "hello.elf"))


def test_the_shells_region_lines_name_their_events(card):
    """A program run from the shell prints each region's counters by their events' names
    (SYS_PMU_EVENT_NAMES: the card's EvtSel -> name), counterK for one without an event."""
    for line in ("pmu set 1 0 INSTRUCTIONS_EXECUTED:u", "pmu start 1"):
        assert card.cmd(line).strip() == "", line
    out = card.cmd("run regions on 1", timeout=60)
    card.cmd("pmu stop 1")
    card.cmd("pmu set 1 0 none")
    lines = [l for l in out.splitlines() if l.startswith("region ")]
    assert sorted(l.split(":")[0][7:] for l in lines) == sorted(CALLS), out
    for l in lines:
        assert re.fullmatch(r"region \w+: calls \d+, INSTRUCTIONS_EXECUTED:u \d+, counter1 \d+, tsc \d+", l.strip()), out
