"""`labctl publish`: the static site a store becomes, opened in headless Chromium. Every page
renders and every plot on it loads (a plot that does not is said under its place), every link
lands on a file of the site, nothing is fetched from elsewhere, and text from the store stays
text however hostile. A history's planted step is found, drawn and listed among the regressions. The plots plots.js draws
from a page's embedded data have a point per point of the data, a filter or a zoom hides some,
and a history's points link to their commits; store text in that data can never close its script.
And the folder rules: never onto a store, a file, a link or a folder labctl did not write; its
own earlier site is replaced, unless something was added to it.

Chromium (Debian's `chromium`) is skipped where it is not on PATH, unless LABCTL_EXPECT_CHROMIUM=1
(CI), where its absence fails. Screenshots are kept in LABCTL_TEST_ARTIFACTS when it is set.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pandas as pd
import pytest
from conftest import run_labctl

EXPERIMENT = '''
name = "tiny"
description = "a history in small"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 30

[[grid]]
kernel = "skynet"
params = { dispatcher = "one_thread" }
axes = { leaves = [100, 1000] }
'''

# Every point fails its verification: a run with no samples.
FAILING = '''
name = "failing"
repeats = 1
warmup = 0
timeout_s = 30

[[grid]]
kernel = "skynet"
params = { dispatcher = "one_thread" }
axes = { leaves = [100, 200] }
env = { LABCTL_FAULT = "wrong_answer" }
'''

# Hostile text put into the store: markup, quotes, a newline, a matplotlib formula that does not
# parse, and a failure of 100,000 characters.
HOSTILE_NAME = 'tiny <b>bold</b> "quoted" \'single\'\n$\\frac{'
HOSTILE_SUBJECT = '<script>alert("subject")</script> & "quotes" $\\frac{x'
HOSTILE_RUN = 'failing <script>alert("name")</script>'
HOSTILE_FAILURE = '<script>alert("failure")</script>"\'\n' + "x" * 100_000 + "</td></table>"
# Values a store may hold (a NaN it may not: the store refuses it as damaged, tests/test_damaged_rows.py).
HOSTILE_PARAMS = '{"leaves": 7, "<img src=x onerror=alert(1)>": "\\"><script>alert(2)</script>"}'

CHROMIUM_TIMEOUT_S = 60


def commit(number: int, subject: str) -> str:
    sha = hashlib.sha1(f"commit {number}".encode()).hexdigest()
    return json.dumps({"sha": sha, "subject": subject, "date": f"2024-03-0{number}T12:00:00+01:00",
                       "build": f"build {number}"})


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """Runs 1-3: the tiny experiment measured on three commits (a history; the second commit's
    subject hostile), its name made hostile; run 4: a run whose points all failed, with hostile
    name, failure and parameters."""
    folder = tmp_path_factory.mktemp("publish")
    (folder / "tiny.toml").write_text(EXPERIMENT)
    (folder / "failing.toml").write_text(FAILING)
    db = folder / "results.db"
    for number, subject in ((1, "first"), (2, HOSTILE_SUBJECT), (3, "third")):
        done = run_labctl("sweep", str(folder / "tiny.toml"), "--db", str(db),
                          env={"LABCTL_COMMIT": commit(number, subject)})
        assert done.returncode == 0, done.stderr
    done = run_labctl("sweep", str(folder / "failing.toml"), "--db", str(db))
    assert done.returncode == 1, done.stderr
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE runs SET name = ? WHERE id IN (1, 2, 3)", (HOSTILE_NAME,))
        connection.execute("UPDATE runs SET name = ?, description = ? WHERE id = 4",
                           (HOSTILE_RUN, "<b>described</b>"))
        connection.execute("UPDATE points SET failure = ? WHERE run_id = 4", (HOSTILE_FAILURE,))
        connection.execute("UPDATE points SET params = ? WHERE run_id = 4 AND position = 0", (HOSTILE_PARAMS,))
    connection.close()
    return db


@pytest.fixture(scope="module")
def site(store) -> Path:
    out = store.parent / "site"
    done = run_labctl("publish", "-o", str(out), "--db", str(store))
    assert done.returncode == 0, done.stderr
    for group in ("runs: 4 pages", "history: 1 experiment", "compare: 1 comparison"):
        assert group in done.stdout
    return out


# -- Chromium -----------------------------------------------------------------------------------


class Browser:
    """Headless Chromium, each call in a fresh profile, with a time limit."""

    def __init__(self, path: str, profiles: Path):
        self.path, self.profiles, self.calls = path, profiles, 0

    def _run(self, *arguments: str) -> subprocess.CompletedProcess:
        self.calls += 1
        profile = self.profiles / f"profile-{self.calls}"
        done = subprocess.run([self.path, "--headless", "--no-sandbox", "--disable-gpu",
                               f"--user-data-dir={profile}", *arguments], capture_output=True,
                              text=True, timeout=CHROMIUM_TIMEOUT_S, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    def dom(self, page: Path, fragment: str = "") -> str:
        """The page's DOM after its load event (and its scripts) ran; `fragment`, the view's state
        plots.js reads from the address (x=leaves&hide=leaves%3D100)."""
        return self._run("--dump-dom", "--virtual-time-budget=3000",
                         page.as_uri() + (f"#{fragment}" if fragment else "")).stdout

    def screenshot(self, page: Path, out: Path) -> Path:
        self._run(f"--screenshot={out}", "--window-size=1280,1600", "--hide-scrollbars", page.as_uri())
        return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Browser:
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("LABCTL_EXPECT_CHROMIUM") == "1":
            pytest.fail("chromium is not on PATH, and LABCTL_EXPECT_CHROMIUM=1 says it must be")
        pytest.skip("chromium is not on PATH (with LABCTL_EXPECT_CHROMIUM=1 this fails)")
    return Browser(found, tmp_path_factory.mktemp("chromium"))


@pytest.fixture(scope="module")
def rendered(site, browser) -> dict[str, str]:
    """The rendered DOM of the index, the history page, a run with a report and the hostile run."""
    history = next((site / "history").glob("*.html"))
    pages = {"index": site / "index.html", "history": history, "run": site / "runs" / "1.html",
             "hostile": site / "runs" / "4.html"}
    return {name: browser.dom(page) for name, page in pages.items()}


def images(dom: str) -> tuple[int, int]:
    """What the page's script counted: (images loaded, images)."""
    found = re.search(r'<body[^>]*data-images="(\d+)/(\d+)"', dom)
    assert found, "the page's script did not run: " + dom[:500]
    return int(found[1]), int(found[2])


def embedded(source: str) -> list:
    """What each <script type="application/json"> of a page's source holds, parsed, in page order."""
    return [json.loads(m) for m in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', source, re.S)]


# -- parsing pages ------------------------------------------------------------------------------


class Page(HTMLParser):
    """Every element's tag and attributes, and the page's text."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(source)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def targets(self) -> list[str]:
        return [value for _, attrs in self.elements for name, value in attrs.items()
                if name in ("href", "src") and value is not None]

    def ids(self) -> set[str]:
        return {attrs["id"] for _, attrs in self.elements if attrs.get("id")}


def check_links(site: Path) -> int:
    """Asserts that every href and src of every page is relative and lands on a file of the
    site (and on an element of the page for an #anchor). Returns how many it checked."""
    checked = 0
    for page in site.rglob("*.html"):
        for target in Page(page.read_text(encoding="utf-8")).targets():
            parts = urlsplit(target)
            assert not parts.scheme and not parts.netloc, f"{page.name}: {target} is not relative"
            path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            assert path.is_relative_to(site.resolve()) and path.is_file(), f"{page.name}: {target} is missing"
            if parts.fragment:
                assert parts.fragment in Page(path.read_text(encoding="utf-8")).ids(), f"{page.name}: {target}"
            checked += 1
    return checked


# -- the site of a store ------------------------------------------------------------------------


def test_the_index_lists_every_run_history_and_comparison_and_every_link_lands_in_the_site(site):
    index = Page((site / "index.html").read_text(encoding="utf-8"))
    targets = index.targets()
    assert {f"runs/{n}.html" for n in (1, 2, 3, 4)} <= set(targets)
    assert "regressions.html" in targets and "compare/2-3.html" in targets
    assert [t for t in targets if t.startswith("history/")] == [f"history/{p.name}" for p in (site / "history").glob("*.html")]
    text = " ".join(index.text)
    assert "first" in text and HOSTILE_SUBJECT in text  # each run's commit, its subject as written
    assert (site / ".labctl-site").is_file() and (site / "style.css").is_file()
    assert check_links(site) > 20


def test_every_page_renders_in_chromium_with_each_of_its_plots_loaded(rendered):
    assert images(rendered["index"]) == (0, 0)
    for name in ("history", "run", "hostile"):
        loaded, total = images(rendered[name])
        assert loaded == total, (name, loaded, total)
    assert images(rendered["history"]) == (0, 0)  # its PNGs only without script, in <noscript>
    assert re.search(r'data-plots="2"', rendered["history"])  # a plot per point and figure, drawn
    assert images(rendered["run"])[1] >= 1  # the report's figures
    assert 'class="missing"' not in rendered["run"] + rendered["history"]
    run = " ".join(Page(rendered["run"]).text)
    assert "Points" in run and "Report" in run and "msgs/s" in run


def test_text_from_the_store_is_shown_as_text_never_run_as_markup(rendered, site):
    for name, dom in rendered.items():
        page = Page(dom)
        scripts = [attrs for tag, attrs in page.elements if tag == "script"
                   and attrs.get("type") != "application/json"]
        assert len(scripts) == 2, name  # the page's own and plots.js, none from the store
        assert [a["src"] for a in scripts if "src" in a] == [("" if name == "index" else "../") + "plots.js"], name
        assert not [tag for tag, attrs in page.elements if tag in ("b", "img") and "src" in attrs
                    and attrs["src"] == "x"], name
        assert not [attrs for _, attrs in page.elements if any(a.startswith("on") for a in attrs)], name
    hostile = " ".join(Page(rendered["hostile"]).text)
    assert 'failing <script>alert("name")</script>' in hostile
    assert '<script>alert("failure")</script>' in hostile and "more characters)" in hostile  # cut, and says so
    assert "<img src=x onerror=alert(1)>" in hostile and "leaves=7" in hostile
    assert "<b>described</b>" in hostile
    history = Page(rendered["history"])
    assert any("tiny <b>bold</b>" in t for t in history.text)  # the name, a newline escaped
    assert HOSTILE_SUBJECT in " ".join(history.text)


# -- the interactive plots (plots.js) --------------------------------------------------------------


def test_a_run_page_plots_each_point_from_its_embedded_data_and_a_filter_hides_some(site, browser):
    page = site / "runs" / "1.html"
    (plot,) = embedded(page.read_text(encoding="utf-8"))
    assert plot["kind"] == "run" and plot["params"] == ["leaves"] and plot["x"] == "leaves"
    assert sorted(p["params"]["leaves"] for p in plot["points"]) == ["100", "1000"]
    assert all(p["low"] <= p["median"] <= p["high"] for p in plot["points"])
    dom = browser.dom(page)
    assert dom.count('class="point"') == 2 and dom.count('class="line"') == 1  # one configuration, leaves on x
    assert dom.count('class="interval"') == 2 and 'type="checkbox" value="leaves=100"' in dom
    assert f'<p class="plot-title">{plot["title"]}</p>' in dom and plot["title"].startswith("skynet: ")  # its kernel
    hidden = browser.dom(page, "hide=leaves%3D100&ylog=1")
    assert hidden.count('class="point"') == 1 and hidden.count('class="line"') == 0
    assert ">Linear y<" in hidden  # drawn on a log scale, its button offering linear back


# Drags the pointer across the first plot of a page from 5% to 45% of its width, then puts the count
# of that plot's points before and after, and the address's fragment, on <body data-dragged>.
DRAG = """<script>
window.addEventListener("load", function () {
  var svg = document.querySelector("svg.plot"), box = svg.getBoundingClientRect();
  var before = svg.querySelectorAll("circle.point").length;
  [["pointerdown", 0.05], ["pointermove", 0.3], ["pointerup", 0.45]].forEach(function (step) {
    svg.dispatchEvent(new PointerEvent(step[0], {bubbles: true, button: 0, pointerId: 1, isPrimary: true,
      clientX: box.left + box.width * step[1], clientY: box.top + box.height / 2}));
  });
  var after = document.querySelector("svg.plot").querySelectorAll("circle.point").length;  // redrawn
  document.body.dataset.dragged = before + " " + after + " " + location.hash;
});
</script>"""


def test_dragging_across_a_plot_zooms_to_that_range_and_keeps_it_in_the_address(planted, browser, tmp_path):
    page = planted / "history" / "planted.html"
    dragged = page.parent / "dragged.html"
    dragged.write_text(page.read_text(encoding="utf-8").replace("</body>", DRAG + "</body>"), encoding="utf-8")
    found = re.search(r'data-dragged="(\d+) (\d+) #from=([-\d.]+)&amp;to=([-\d.]+)"', browser.dom(dragged))
    dragged.unlink()
    assert found, "the drag zoomed nothing"
    before, after, low, high = int(found[1]), int(found[2]), float(found[3]), float(found[4])
    assert before == 12 and after == sum(low <= n <= high for n in range(12)) and 0 < after < 12


def test_a_history_plots_each_commit_as_a_link_to_its_row_with_its_changes_marked(planted, browser):
    page = planted / "history" / "planted.html"
    commits, *plots = embedded(page.read_text(encoding="utf-8"))
    assert len(commits) == 12 and [len(p["points"]) for p in plots] == [12, 12, 12]
    assert [[c["kind"] for c in p["changes"]] for p in plots] == [["step"], [], ["drift"]]
    dom = browser.dom(page)
    assert dom.count('class="point"') == 36 and dom.count('class="step"') == 1 and dom.count('class="drift"') == 1
    links = [a["href"] for tag, a in Page(dom).elements if tag == "a" and a.get("class") == "point-link"]
    assert links == [f"#commit-{n}" for n in range(12)] * 3
    sha = hashlib.sha1(b"planted 6").hexdigest()
    titles = re.findall(r'<a href="#commit-6" class="point-link"><circle[^>]*><title>([^<]*)</title>', dom)
    assert len(titles) == 3 and all(t.startswith(f"{sha[:10]} change 6") for t in titles)  # hash, subject
    assert sha in re.search(r'<tr id="commit-6">.*?</tr>', dom, re.S).group(0)  # and its link lands on its row
    zoomed = browser.dom(page, "from=3.5&to=8.5")  # commits 4 to 8, as a drag across them leaves it
    assert zoomed.count('class="point"') == 15 and zoomed.count('class="step"') == 1


def test_store_text_embedded_for_the_plots_cannot_close_its_script_and_stays_text(site, store, browser, tmp_path):
    from labctl.read import site as module

    source = (next((site / "history").glob("*.html"))).read_text(encoding="utf-8")
    raw = re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', source, re.S)
    assert raw and not [r for r in raw if re.search(r"[<>&]", r)]
    assert HOSTILE_SUBJECT in [c["subject"] for c in embedded(source)[0]]
    # A parameter whose name and value are markup, quotes, an ampersand and a line separator.
    name, value = 'x</script><!--"&\'é\u2028', '</script><script>alert(3)</script>'
    db = Path(shutil.copy(store, tmp_path / "results.db"))
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE points SET params = ? WHERE run_id = 1 AND position = 0",
                           (json.dumps({"dispatcher": "one_thread", "leaves": 100, name: value}),))
    connection.close()
    *_, plots = module._points(db, 1)
    assert [p["params"][name] for p in plots[0]["points"]] == [value, module.ABSENT]
    shutil.copy(Path(module.__file__).parent / "templates" / module.PLOTS_FILE, tmp_path)
    page = tmp_path / "page.html"
    page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"><script src="{module.PLOTS_FILE}"></script>'
                    f'</head><body>{module._embedded(plots[0])}</body></html>', encoding="utf-8")
    assert embedded(page.read_text(encoding="utf-8")) == [plots[0]]
    dom = Page(browser.dom(page))
    assert [tag for tag, _ in dom.elements].count("script") == 2  # plots.js and its data: nothing injected
    assert name in dom.text and f" {value}" in dom.text  # the filter's legend and checkbox label, as text


def test_screenshots_of_the_index_a_history_and_a_run_page_are_pictures_not_blank(site, browser, tmp_path):
    from matplotlib.image import imread

    folder = Path(os.environ.get("LABCTL_TEST_ARTIFACTS") or tmp_path) / "publish"
    folder.mkdir(parents=True, exist_ok=True)
    history = next((site / "history").glob("*.html"))
    for page, name in ((site / "index.html", "index.png"), (history, "history.png"),
                       (site / "runs" / "1.html", "run.png")):
        shot = browser.screenshot(page, folder / name)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert imread(shot).std() > 0, shot


def test_a_run_without_samples_has_its_points_and_failures_on_its_page(site):
    page = (site / "runs" / "4.html").read_text(encoding="utf-8")
    assert page.count('<tr class="failed">') == 2
    assert "0 of 2 done, 2 failed" in page


def test_a_run_page_says_the_fixed_parameters_once_and_lists_only_the_varying_ones_per_point(site):
    from labctl.catalogue import kernels

    page = (site / "runs" / "1.html").read_text(encoding="utf-8")
    fixed = re.search(r'<p class="fixed">Every point: <code>([^<]*)</code></p>', page)
    assert fixed, "the run page does not say its fixed parameters"
    names = [pair.split("=")[0] for pair in fixed.group(1).split()]
    assert "dispatcher" in names and "leaves" not in names
    schema = [p.name for p in kernels.get("skynet").params]
    assert names == [name for name in schema if name in names], "the fixed parameters are not in schema order"
    rows = re.findall(r'<td class="long">([^<]*)</td>', page)
    assert sorted(r for r in rows if r) == ["leaves=100", "leaves=1000"]


def test_the_comparison_of_an_experiments_two_latest_runs_is_a_table(site):
    page = Page((site / "compare" / "2-3.html").read_text(encoding="utf-8"))
    assert [tag for tag, _ in page.elements].count("table") >= 2
    assert "Run 3 (B) against run 2 (A): elapsed_ns, lower is better" in " ".join(page.text)


# -- a planted change ---------------------------------------------------------------------------


DRIFT = [100_000.0] * 4 + [106_000.0, 112_000.0, 118_000.0, 124_000.0] + [130_000.0] * 4


def planted_series() -> pd.DataFrame:
    """Twelve commits of three points: the first steps up by half at commit 6, the second is flat,
    the third drifts up by 30% over commits 4 to 8; values within 1% of their level."""
    rows = []
    for order in range(12):
        sha = hashlib.sha1(f"planted {order}".encode()).hexdigest()
        for key, leaves, level in (("k1", 100, 100_000.0 if order < 6 else 150_000.0), ("k2", 1000, 400_000.0),
                                   ("k3", 10_000, DRIFT[order])):
            values = [level * (1 + 0.01 * ((order * 7 + i * 3) % 5 - 2) / 2) for i in range(3)]
            rows.append({"experiment": "planted", "kernel": "skynet", "key": key, "params": {"leaves": leaves},
                         "label": f"skynet leaves={leaves}", "measure": "time", "metric": "elapsed_ns",
                         "exact": False, "order": order, "commit": sha, "short": sha[:10],
                         "subject": f"change {order}", "date": f"2024-05-{order + 1:02d}T00:00:00+00:00",
                         "run": order + 1, "values": values, "median": sorted(values)[1]})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    """The site of a store without runs whose history is planted_series (labctl.read.series.series
    replaced)."""
    from labctl.read import series, site
    from labctl.store import Store

    folder = tmp_path_factory.mktemp("planted")
    Store(folder / "empty.db").close()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(series, "series", lambda db, experiment=None: planted_series())
        site.write(folder / "empty.db", folder / "site")
    return folder / "site"


def pixels_of(path: Path, colour: tuple[float, float, float]) -> int:
    """How many pixels of a plot have `colour` (RGB, 0..1)."""
    from matplotlib.image import imread

    return int((abs(imread(path)[..., :3] - colour).max(axis=-1) < 0.03).sum())


STEP_LINE = (0xcf / 255, 0x22 / 255, 0x2e / 255)  # #cf222e
DRIFT_SPAN = tuple(0.75 + 0.25 * c / 255 for c in (0xfb, 0x8f, 0x44))  # #fb8f44 at alpha 0.25 on white


def test_a_planted_step_and_drift_are_drawn_listed_and_counted_among_the_regressions(planted):
    page = Page((planted / "history" / "planted.html").read_text(encoding="utf-8"))
    text = " ".join(page.text)
    assert text.count("No change found over these commits.") == 1  # the flat point
    plots = [planted / "history" / "planted" / f"{n}-elapsed_ns.png" for n in (1, 2, 3)]
    assert [pixels_of(plot, STEP_LINE) > 100 for plot in plots] == [True, False, False]
    assert [pixels_of(plot, DRIFT_SPAN) > 1000 for plot in plots] == [False, False, True]
    regressions = Page((planted / "regressions.html").read_text(encoding="utf-8"))
    series = [t for t in regressions.targets() if "#" in t]
    assert series == ["history/planted.html#series-1", "history/planted.html#series-3"]  # biggest first
    words = " ".join(regressions.text)
    sizes = [float(size) for size in re.findall(r"\+(\d+\.\d)%", words)]
    assert 45 < sizes[0] < 55 and 25 < sizes[1] < 35
    assert "step" in words and "drift" in words
    assert hashlib.sha1(b"planted 6").hexdigest()[:10] in words and "change 6" in words
    assert check_links(planted) > 5


def test_a_changes_commits_link_to_their_rows_in_the_table_of_commits(planted):
    page = (planted / "history" / "planted.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="#(commit-\d+)"><code>([^<]*)</code></a>', page)
    assert links, "no change in the planted history links to its commit"
    for anchor, short in links:
        row = re.search(rf'<tr id="{anchor}">\s*<td class="number">\d+</td>\s*<td class="text"><code title="[^"]*">([^<]*)</code>', page)
        assert row and row.group(1) == short, f"{short} links to #{anchor}, which is not its row"


def test_a_plot_that_does_not_load_is_said_under_its_place(site, browser, tmp_path):
    copy = shutil.copytree(site, tmp_path / "site")
    figures = sorted((copy / "runs" / "1").rglob("*.png"))
    figures[0].unlink()
    dom = browser.dom(copy / "runs" / "1.html")
    assert images(dom) == (len(figures) - 1, len(figures))
    assert f"plot missing: 1/{figures[0].relative_to(copy / 'runs' / '1').as_posix()}" in " ".join(Page(dom).text)


# -- the folder ---------------------------------------------------------------------------------


@pytest.fixture
def empty_store(tmp_path) -> Path:
    from labctl.store import Store

    Store(tmp_path / "empty.db").close()
    return tmp_path / "empty.db"


def refused(result, code: int, *words: str) -> str:
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    line = result.stderr.strip()
    assert line.startswith("labctl: ") and "\n" not in line, result.stderr
    for word in words:
        assert word in line, line
    return line


def test_a_store_without_runs_gives_a_site_saying_so(empty_store, tmp_path):
    out = tmp_path / "empty site"
    out.mkdir()  # an empty folder is taken
    assert run_labctl("publish", "-o", str(out), "--db", str(empty_store)).returncode == 0
    assert "This store holds no runs yet" in (out / "index.html").read_text(encoding="utf-8")
    assert "No change over the histories" in (out / "regressions.html").read_text(encoding="utf-8")


def test_publish_replaces_its_own_site_but_never_one_with_a_file_added(empty_store, tmp_path):
    out = tmp_path / "site"
    assert run_labctl("publish", "-o", str(out), "--db", str(empty_store)).returncode == 0
    first = (out / ".labctl-site").read_text()
    assert run_labctl("publish", "-o", str(out), "--db", str(empty_store)).returncode == 0
    assert (out / ".labctl-site").read_text() != first  # written again, in place
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site")] == []  # no staging left
    (out / "notes.txt").write_text("mine")
    refused(run_labctl("publish", "-o", str(out), "--db", str(empty_store)), 2, f"--output {out}", "notes.txt (added)")
    assert (out / "notes.txt").read_text() == "mine"


def test_publish_never_writes_onto_a_store_a_file_a_link_or_a_folder_it_did_not_write(empty_store, tmp_path):
    before = empty_store.read_bytes()
    refused(run_labctl("publish", "-o", str(empty_store), "--db", str(empty_store)), 2, "that is the store")
    assert empty_store.read_bytes() == before
    mine = tmp_path / "mine.txt"
    mine.write_text("mine")
    refused(run_labctl("publish", "-o", str(mine), "--db", str(empty_store)), 2, f"--output {mine}", "not a folder")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "index.html").write_text("mine")
    refused(run_labctl("publish", "-o", str(folder), "--db", str(empty_store)), 2, "no .labctl-site")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "empty folder", target_is_directory=True)
    refused(run_labctl("publish", "-o", str(link), "--db", str(empty_store)), 2, "a symbolic link")
    assert mine.read_text() == "mine" and (folder / "index.html").read_text() == "mine"
    assert not (tmp_path / "empty folder").exists()


def test_a_missing_or_empty_store_is_refused_in_one_line(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    for db, words in ((tmp_path / "none.db", "no such store"), (empty, "an empty file, not a store")):
        refused(run_labctl("publish", "-o", str(tmp_path / "site"), "--db", str(db)), 2, f"--db {db}", words)
    assert not (tmp_path / "site").exists() and not (tmp_path / "none.db").exists()


def test_a_history_axis_shows_the_level_and_draws_a_count_that_barely_moves_flat():
    from matplotlib.figure import Figure

    from labctl.read import site

    ax = Figure().add_subplot()
    medians = [339_380_000.0, 339_380_016.0, 339_380_000.0]  # 16 instructions in 3.4 * 10^8
    ax.plot([0, 1, 2], medians)
    site._level_axis(ax, medians)
    low, high = ax.get_ylim()
    assert high - low >= site.MIN_SPAN * 339_380_000 * 0.999
    assert low < min(medians) and max(medians) < high
    assert ax.yaxis.get_major_formatter().get_useOffset() is False
    ax = Figure().add_subplot()
    ax.plot([0, 1], [100.0, 200.0])
    site._level_axis(ax, [100.0, 200.0])  # a real move keeps matplotlib's own limits
    assert ax.get_ylim()[1] - ax.get_ylim()[0] < 150


# A publish held inside its staging folder until the test signals it: the site half-written.
HELD_PUBLISH = """
import sys, time
from pathlib import Path
from labctl.read import site
fill, ready = site._fill, Path(sys.argv[1])
def held(staging, *args, **kwargs):
    fill(staging, *args, **kwargs)
    ready.write_text(str(staging))
    time.sleep(120)
site._fill = held
from labctl.__main__ import run
sys.argv = ["labctl", *sys.argv[2:]]
run()
"""


def test_sigterm_mid_publish_ends_it_as_an_interruption_leaving_the_previous_site_whole(store, tmp_path):
    import signal
    import sys
    import time

    out = tmp_path / "site"
    assert run_labctl("publish", "-o", str(out), "--db", str(store)).returncode == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    ready = tmp_path / "ready"
    process = subprocess.Popen([sys.executable, "-c", HELD_PUBLISH, str(ready), "publish", "-o", str(out),
                                "--db", str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not ready.exists() and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)
    staging = Path(ready.read_text())
    assert staging.is_dir()
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err.strip() == "labctl: interrupted", err
    assert not staging.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["site", "ready"])
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
