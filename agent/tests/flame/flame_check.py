#!/usr/bin/env python3
"""The flame graph (format=html) as a user opens it: in headless Chromium.

flame_check.py JAVA_HOME LIBJINST TEST_TRACE_FLAME SOURCES WORK [--screenshot PNG]

1. test_trace_flame writes two synthetic pages: 100,000 frames, and names
   that would break a page (<, ", </script>, <!--, bytes that are not
   UTF-8), which some of the 100,000 have too. Both pass xmllint --html
   without a message.
2. javac compiles four Java files of SOURCES under the agent
   (trace=times, format=html, javac's own classes traced); the page it
   writes holds no external asset. (Not in sanitized builds: 30 s there.)
3. The 100,000 frames and javac's page open in headless Chromium (the harness of the coverage
   report's test, tests/coverage/report/report_check.py) with a probe
   script appended, which reads what the page rendered: the frames drawn
   and the canvas pixels painted, the clock shown, a search's matched
   share, the tooltip of a frame, a click's zoom (the view and the pixels
   change) and the reset; the probe's findings come back through
   --dump-dom.
4. With --screenshot, javac's graph with a search is saved as PNG
   (scripts/flame_screenshot.sh makes docs/flame-javac.png so).
"""
import glob
import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # (no __pycache__ in the source tree)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "coverage",
                                "report"))
import report_check  # noqa: E402  (its check, run and chromium)
from report_check import check, chromium, run  # noqa: E402

# Runs in the page after its own script: acts as a user would (search,
# hover, click, reset) and writes what it saw into <pre id="probe">.
PROBE = """<script>
(function () {
  const out = {}, c = document.getElementById("graph"), g = c.getContext("2d");
  const text = id => document.getElementById(id).textContent;
  function pixels() {
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let painted = 0, sig = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3]) painted++;
      /* every pixel: a match can be one frame a few pixels wide */
      sig = (sig * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) | 0;
    }
    return [painted, sig];
  }
  out.scripts = document.getElementsByTagName("script").length;
  out.title = text("title");
  out.clock = text("clock");
  out.drawn = +document.body.dataset.drawn;
  [out.painted, out.sig] = pixels();
  out.size = [c.width, c.height];
  const search = document.getElementById("search");
  search.value = SEARCH;
  search.dispatchEvent(new Event("input"));
  out.matched = text("matched");
  out.searchSig = pixels()[1];
  search.value = "";
  search.dispatchEvent(new Event("input"));
  /* a frame a few rows down, found by hovering along its row */
  const r = c.getBoundingClientRect(), tip = document.getElementById("tip");
  for (let row = Math.min(ROW, c.height / 17 - 1); row >= 1 && !out.tip; row--) {
    for (let x = r.width / 2; x < r.width && !out.tip; x += 3) {
      const at = {clientX: r.left + x, clientY: r.top + 17 * row + 8, bubbles: true};
      c.dispatchEvent(new MouseEvent("mousemove", at));
      if (tip.style.display === "block") {
        out.tip = tip.textContent;
        const t0 = performance.now();
        c.dispatchEvent(new MouseEvent("click", at));
        out.zoomMs = performance.now() - t0;
      }
    }
  }
  out.view = text("view");
  out.zoomDrawn = +document.body.dataset.drawn;
  out.zoomSig = pixels()[1];
  document.getElementById("reset").click();
  out.resetView = text("view");
  out.resetSig = pixels()[1];
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def probe(page, work, search, row=4):
    """What Chromium rendered of page, after a search for search."""
    with open(page, encoding="utf-8") as f:
        html = f.read()
    at = html.rindex("</body>")
    probe_js = PROBE.replace("SEARCH", json.dumps(search).replace("<", "\\u003c")).replace("ROW", str(row))
    copy = os.path.join(work, "probe-" + os.path.basename(page))
    with open(copy, "w", encoding="utf-8") as f:
        f.write(html[:at] + probe_js + html[at:])
    r = chromium(["--window-size=1280,900", "--dump-dom", "file://" + copy])
    m = re.search(r'<pre id="probe">(.*?)</pre>', r.stdout, re.S)
    if not m:
        print(r.stderr[-2000:])
        return None
    return json.loads(m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
                      .replace("&amp;", "&"))


def check_common(tag, seen):
    check(seen is not None, f"{tag}: Chromium ran the page and the probe")
    if seen is None:
        return False
    check(seen["drawn"] > 0 and seen["painted"] > 1000,
          f"{tag}: {seen['drawn']} frames drawn, {seen['painted']} pixels painted on a {seen['size']} canvas")
    check("clock: wall time (recorded in ns)" in seen["clock"], f"{tag}: the clock shown: {seen['clock']}")
    return True


def check_synthetic(tester, work):
    r = run([tester, work])
    check(r.returncode == 0, "test_trace_flame wrote its pages " + r.stdout[-300:])
    for name in ("big.html", "names.html"):
        r = run(["xmllint", "--html", "--noout", os.path.join(work, name)])
        check(r.returncode == 0 and not r.stderr.strip(), f"{name}: xmllint --html without a message {r.stderr[:300]}")
    # big.html: 100,000 frames, 20 of them of each name of names.html
    seen = probe(os.path.join(work, "big.html"), work, "</script>")
    if check_common("100,000 frames", seen):
        check(100 < seen["drawn"] < 100000, f"100,000 frames: those under half a pixel skipped ({seen['drawn']} drawn)")
        check(seen["zoomMs"] < 1000, f"100,000 frames: a zoom redraws in {seen['zoomMs']:.1f} ms")
        check(seen["size"][1] <= 32767, f"100,000 frames: a stack 2,500 deep in a canvas {seen['size'][1]} pixels high")
        check(seen["scripts"] == 3,
              f"100,000 frames: the page's two scripts and the probe, no more ({seen['scripts']})")
        check(seen["title"] == "</script><b>title</b>", f"100,000 frames: the title as text: {seen['title']}")
        check(re.match(r"matched: [0-9.]+% of the view \([0-9.]+ [mun]?s, [1-9][0-9]* frames?\)", seen["matched"])
              is not None, f"100,000 frames: '</script>' found: {seen['matched']}")


def javac_page(java_home, lib, sources, work):
    # relative names, run in WORK: the page's title is the command line
    os.makedirs(os.path.join(work, "src"))
    files = []
    for f in sorted(glob.glob(os.path.join(sources, "*.java")))[:4]:
        shutil.copy(f, os.path.join(work, "src"))
        files.append(os.path.join("src", os.path.basename(f)))
    out = os.path.join(work, "javac")
    # A sanitized agent in javac takes 30 s of CI's budget, for a writer
    # that runs sanitized in unit_test_trace_flame and fuzz_trace already.
    if os.environ.get("JINST_SANITIZED") == "ON":
        return None
    opts = f"trace=times,format=html+folded,tick=100,include=com.sun.tools.javac.**,out={out},log={out}.log"
    r = run([os.path.join(java_home, "bin", "javac"), "-J-agentpath:" + lib + "=" + opts, "-d", "classes"] + files,
            timeout=120, cwd=work)
    with open(out + ".log") as f:
        log = f.read()
    check(r.returncode == 0 and "wrote " + out + ".html" in log,
          f"javac compiles {len(files)} files under the agent, which writes javac.html {r.stderr[-300:]} {log[-300:]}")
    return out + ".html"


def check_javac(page, work):
    with open(page, encoding="utf-8") as f:
        html = f.read()
    external = [s for s in ("http:", "https:", " src=", "<link", "url(", "@import") if s in html]
    check(not external, f"javac.html: {len(html)} bytes, no external asset {external}")
    seen = probe(page, work, "JavacParser\\.parseCompilationUnit", row=9)
    if not check_common("javac", seen):
        return
    m = re.match(r"matched: ([0-9.]+)% of the view \(([0-9.]+) [mun]?s, ([0-9]+) frames?\)", seen["matched"])
    check(m is not None and 0 < float(m.group(1)) < 100 and int(m.group(3)) >= 1,
          f"javac: search JavacParser.parseCompilationUnit: {seen['matched']}")
    check(seen["searchSig"] != seen["sig"], "javac: the matches are highlighted (the pixels change)")
    tip = seen.get("tip") or ""
    check(re.search(r"wall time, inclusive: [0-9.]+ [mun]?s \([0-9.]+% of all", tip) is not None and
          re.search(r"calls of the method, all stacks \(exact\): [0-9,]+", tip) is not None,
          "javac: a frame's tooltip gives its times and calls: " + tip.replace("\n", " | "))
    check(seen["view"].startswith("zoomed: ") and seen["zoomSig"] != seen["sig"]
          and seen["zoomDrawn"] != seen["drawn"],
          f"javac: a click zooms ({seen['view']}, {seen['zoomDrawn']} frames drawn, {seen['drawn']} before)")
    check(seen["resetView"] == "" and seen["resetSig"] == seen["sig"], "javac: reset gives the first view back")
    folded = page[:-len(".html")] + ".folded"
    with open(folded) as f:
        first = f.readline()
    check(first.startswith("# jinst folded stacks: clock wall, unit ns"), "javac.folded names its clock: " + first)


def main():
    java_home, lib, tester, sources, work = sys.argv[1:6]
    shot = sys.argv[7] if len(sys.argv) > 7 and sys.argv[6] == "--screenshot" else None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # Chromium's profile folder (report_check's chromium() puts it under
    # TMPDIR) of this run alone: a second Chromium on one profile hands its
    # page to the first and prints nothing
    os.environ["TMPDIR"] = work
    if not shutil.which("chromium") or not shutil.which("xmllint"):
        print("SKIP: no chromium or xmllint (scripts/setup.sh installs them)")
        return 77
    check_synthetic(tester, work)
    page = javac_page(java_home, lib, sources, work)
    if page is None:
        print("javac under a sanitized agent: left out (the page's writer runs sanitized in the unit test)")
    elif os.path.isfile(page):
        check_javac(page, work)
        if shot:
            r = chromium(["--screenshot=" + shot, "--window-size=1400,800", "--hide-scrollbars",
                          "file://" + page + "#search=JavacParser"])
            check(os.path.isfile(shot) and os.path.getsize(shot) > 20000, "screenshot " + shot)
    failures = report_check.failures
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
