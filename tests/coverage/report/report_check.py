#!/usr/bin/env python3
"""jinst report against JaCoCo 0.8.6's own reports, and every format checked
by the tool that reads it.

report_check.py JINST COV_MAKE WORK [--screenshot PNG]

1. The fixture (fixture/demo/...) is compiled with javac; cov_make writes
   probe data for it (probes placed by jinst_coverage_place, set by a
   seeded draw) as a .cov and as text; JacocoReport.java (JaCoCo's Analyzer,
   XMLFormatter, CSVFormatter) reports the same probes. jinst's XML must
   equal JaCoCo's but for sessioninfo and the order of siblings (JaCoCo's
   is that of HashMaps), its CSV the same lines. The same over Debian's
   commons-lang3.jar.
2. xmllint --valid against report.dtd from Debian's org.jacoco.report.jar.
3. genhtml builds a site from the LCOV tracefile.
4. The HTML report in headless Chromium: the totals on the index page and
   the colour class and branch words of every line of a source page, as
   the XML says they must be; a screenshot of a source page.
5. Hit counts, a class file that is not the one the data was recorded
   for, jars as --classfiles, the console summary, and the errors.
"""
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
JAVA = "/usr/share/java"
JACOCO_CP = ":".join(f"{JAVA}/{j}" for j in ("org.jacoco.core.jar", "org.jacoco.report.jar", "asm.jar",
                                             "asm-commons.jar", "asm-tree.jar"))
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    # Under ASan and UBSan builds: a sanitizer's report fails the test even
    # when the program went on.
    for sign in ("runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer"):
        if sign in r.stderr:
            check(False, f"{os.path.basename(args[0])}: {sign} {r.stderr[r.stderr.index(sign):][:300]}")
    return r


def canon(elem):
    """An element as a sortable tuple: tag, attributes, children sorted
    (sessioninfo left out)."""
    kids = sorted(canon(c) for c in elem if c.tag != "sessioninfo")
    return (elem.tag, tuple(sorted(elem.attrib.items())), tuple(kids))


def setup(work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    classes = os.path.join(work, "classes")
    src = os.path.join(HERE, "fixture")
    sources = [os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs if f.endswith(".java")]
    r = run(["javac", "--release", "11", "-g", "-d", classes] + sources)
    check(r.returncode == 0, "fixture compiled " + r.stderr.strip())
    r = run(["javac", "-cp", JACOCO_CP, "-d", os.path.join(work, "peer"), os.path.join(HERE, "JacocoReport.java")])
    check(r.returncode == 0, "JaCoCo peer compiled " + r.stderr.strip())
    with zipfile.ZipFile(os.path.join(JAVA, "org.jacoco.report.jar")) as z:
        dtd = z.read("org/jacoco/report/xml/report.dtd")
    with open(os.path.join(work, "report.dtd"), "wb") as f:
        f.write(dtd)
    return classes, src


def compare_with_jacoco(jinst, cov_make, work, classes, variant, extra):
    tag = f"{os.path.basename(classes)}-v{variant}{''.join(extra).replace('/', '_')}"
    cov, txt = os.path.join(work, tag + ".cov"), os.path.join(work, tag + ".txt")
    r = run([cov_make] + extra + [classes, str(variant), cov, txt])
    check(r.returncode == 0, f"{tag}: cov_make " + r.stderr.strip())
    ref_xml, ref_csv = os.path.join(work, tag + "-jacoco.xml"), os.path.join(work, tag + "-jacoco.csv")
    r = run(["java", "-cp", JACOCO_CP + ":" + os.path.join(work, "peer"), "JacocoReport", txt, classes,
             "fixture", ref_xml, ref_csv])
    check(r.returncode == 0, f"{tag}: JaCoCo's report " + r.stderr.strip())
    xml, csv = os.path.join(work, tag + ".xml"), os.path.join(work, tag + ".csv")
    r = run([jinst, "report", cov, "--classfiles", classes, "--name", "fixture", "--xml", xml, "--csv", csv])
    check(r.returncode == 0, f"{tag}: jinst report " + r.stderr.strip())
    a, b = ET.parse(xml).getroot(), ET.parse(ref_xml).getroot()
    check(canon(a) == canon(b), f"{tag}: XML equals JaCoCo's (but sessioninfo and sibling order)")
    with open(xml, "rb") as f:
        head = f.read(200)
    with open(ref_xml, "rb") as f:
        check(head[:150] == f.read(150), f"{tag}: XML declaration and DOCTYPE as JaCoCo's")
    with open(csv) as f, open(ref_csv) as g:
        mine, ref = f.read().splitlines(), g.read().splitlines()
    check(mine[0] == ref[0] and sorted(mine) == sorted(ref), f"{tag}: CSV equals JaCoCo's ({len(ref) - 1} classes)")
    r = run(["xmllint", "--noout", "--valid", os.path.join(work, tag + ".xml")])
    check(r.returncode == 0, f"{tag}: xmllint --valid against report.dtd " + r.stderr.strip()[:300])
    return cov, xml


def real_jar_classes(work, jar):
    """A Debian jar's classes as a folder (JacocoReport walks folders), without
    the multi-release copies that both tools would refuse as duplicates."""
    out = os.path.join(work, os.path.basename(jar) + ".d")
    with zipfile.ZipFile(jar) as z:
        for n in z.namelist():
            if n.endswith(".class") and not n.startswith("META-INF/"):
                z.extract(n, out)
    return out


def chromium(args):
    return run(["chromium", "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                "--user-data-dir=" + os.environ.get("TMPDIR", "/tmp") + "/jinst-chromium"] + args, timeout=120)


def expected_lines(xml, pkg, source):
    root = ET.parse(xml).getroot()
    for p in root.iter("package"):
        if p.get("name") != pkg:
            continue
        for s in p.iter("sourcefile"):
            if s.get("name") == source:
                return {int(l.get("nr")): l.attrib for l in s.iter("line")}
    return {}


def status(line):
    mi, ci, mb, cb = (int(line[k]) for k in ("mi", "ci", "mb", "cb"))
    missed, covered = mi + mb > 0, ci + cb > 0
    return "pc" if missed and covered else "fc" if covered else "nc"


def rendered_rows(dom):
    """id -> (class, branch words, hits) of the source table's rows."""
    root = ET.fromstring(dom.replace("&nbsp;", " ").split("<body>", 1)[1].rsplit("</body>", 1)[0]
                         .join(["<body>", "</body>"]))
    rows = {}
    for tr in root.iter("tr"):
        if tr.get("id", "").startswith("L"):
            cells = {td.get("class"): "".join(td.itertext()) for td in tr.iter("td")}
            rows[int(tr.get("id")[1:])] = (tr.get("class"), cells.get("br", ""), cells.get("hits", ""))
    return rows


def check_html(jinst, work, cov, xml, src, classes, screenshot):
    html = os.path.join(work, "html")
    r = run([jinst, "report", cov, "--classfiles", classes, "--sourcefiles", src, "--name", "fixture",
             "--html", html])
    check(r.returncode == 0 and os.path.isfile(os.path.join(html, "index.html")), "HTML written " + r.stderr)
    pages = [os.path.join(d, f) for d, _, fs in os.walk(html) for f in fs if f.endswith(".html")]
    external = []
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        external += [page for sign in ("http:", "https:", "<script", "<link", " src=", "url(") if sign in text]
    check(len(pages) >= 10 and not external, f"{len(pages)} HTML pages, no external asset, no script {external[:3]}")
    totals = {c.get("type"): c.attrib for c in ET.parse(xml).getroot().findall("counter")}
    r = chromium(["--dump-dom", "file://" + os.path.join(html, "index.html")])
    dom = r.stdout
    for kind, ctype in (("lines", "LINE"), ("branches", "BRANCH"), ("methods", "METHOD"), ("classes", "CLASS"),
                        ("instructions", "INSTRUCTION")):
        c = totals[ctype]
        want = f'<span id="total-{kind}">{c["covered"]} of {int(c["missed"]) + int(c["covered"])} {kind} covered'
        check(want in dom, f"Chromium renders the index's total {kind}: {want[len('<span id=x'):]}")
    page = os.path.join(html, "demo.shapes", "Shapes.java.html")
    r = chromium(["--dump-dom", "file://" + page])
    rows = rendered_rows(r.stdout)
    want = expected_lines(xml, "demo/shapes", "Shapes.java")
    bad = [n for n, l in want.items() if rows.get(n, (None,))[0] != status(l)]
    check(want and not bad, f"Chromium renders {len(want)} lines of Shapes.java with the XML's status {bad[:5]}")
    words = [n for n, l in want.items() if int(l["mb"]) and int(l["cb"])
             and rows[n][1] != f'{l["mb"]} of {int(l["mb"]) + int(l["cb"])} branches missed.']
    check(not words, f"partly covered branches shown in words on every such line {words[:5]}")
    with open(os.path.join(src, "demo", "shapes", "Shapes.java")) as f:
        n = len(f.read().splitlines())
    check(sorted(rows) == list(range(1, n + 1)), f"every source line shown ({len(rows)} of {n})")
    shot = screenshot or os.path.join(work, "source.png")
    r = chromium(["--screenshot=" + shot, "--window-size=1100,1400", "file://" + page])
    check(os.path.isfile(shot) and os.path.getsize(shot) > 10000, "screenshot of a source page " + shot)
    r = chromium(["--dump-dom", "file://" + os.path.join(html, "demo.shapes", "index.html")])
    check('href="Shapes$Square.html"' in r.stdout and "Shapes.Square" in r.stdout, "package page lists classes")
    check("Shapes$Shape" not in r.stdout and not os.path.exists(os.path.join(html, "demo.shapes", "Shapes$Shape.html")),
          "an interface without code has no row and no page (JaCoCo's HTML)")
    utc = os.path.join(work, "html-utc")
    run([jinst, "report", cov, "--classfiles", classes, "--html", utc], env=dict(os.environ, TZ="UTC"))
    with open(os.path.join(utc, "index.html")) as f:
        index = f.read()
    check("<td>Jan 1, 1970, 12:00:01 AM</td><td>Jan 1, 1970, 12:00:02 AM</td>" in index,
          "sessions' start and dump shown as JaCoCo shows them, local date and time")


def check_lcov(jinst, work, cov, src, classes):
    info = os.path.join(work, "fixture.info")
    r = run([jinst, "report", cov, "--classfiles", classes, "--sourcefiles", src, "--lcov", info])
    check(r.returncode == 0, "LCOV written " + r.stderr)
    r = run(["genhtml", "-q", "-o", os.path.join(work, "genhtml"), info])
    check(r.returncode == 0 and os.path.isfile(os.path.join(work, "genhtml", "index.html")),
          "genhtml builds a site from the LCOV tracefile " + r.stderr.strip()[:300])
    slash = os.path.join(work, "fixture-slash.info")
    run([jinst, "report", cov, "--classfiles", classes, "--sourcefiles", src + "/", "--lcov", slash])
    with open(info) as f, open(slash) as g:
        sf = [l for l in f if l.startswith("SF:")]
        check(sf and sf == [l for l in g if l.startswith("SF:")] and not any("//" in l for l in sf),
              f"--sourcefiles DIR/ gives the SF paths of DIR {sf[:1]}")
    return info


def check_counts(jinst, cov_make, work, classes, src):
    cov = os.path.join(work, "counts.cov")
    run([cov_make, "--counts", classes, "2", cov, os.path.join(work, "counts.txt")])
    info, html = os.path.join(work, "counts.info"), os.path.join(work, "counts-html")
    r = run([jinst, "report", cov, "--classfiles", classes, "--sourcefiles", src, "--lcov", info, "--html", html])
    check(r.returncode == 0, "report with hit counts " + r.stderr)
    with open(info) as f:
        das = [int(l.split(",")[1]) for l in f if l.startswith("DA:")]
    check(max(das) > 1, f"LCOV DA lines carry hit counts (highest {max(das)})")
    rows = rendered_rows(chromium(["--dump-dom", "file://" + os.path.join(html, "demo.shapes",
                                                                         "Shapes.java.html")]).stdout)
    hits = [h for _, _, h in rows.values() if h.endswith("×")]
    check(hits and any(h != "1×" for h in hits), f"HTML shows hit counts ({len(hits)} lines, e.g. {hits[:3]})")


def probes_from_dump(jinst, cov, txt):
    """JacocoReport's text from `jinst dump` of a .cov: a probe is hit when
    its boolean is 1 or its count is not 0."""
    with open(txt, "w") as f:
        for line in run([jinst, "dump", cov]).stdout.splitlines():
            parts = line.split()
            if len(parts) > 4 and parts[2] == "counts" and parts[4] == "hit:":
                f.write(parts[0] + " " + "".join("1" if p != "0" else "0" for p in parts[5:]) + "\n")
            elif len(parts) > 4 and parts[2] == "booleans" and parts[4] == "hit":
                f.write(parts[0] + " " + (parts[5] if len(parts) > 5 else "") + "\n")


def check_real_run(jinst, work, classes, src):
    """The fixture run under the agent's coverage=counts (when this build's
    agent has the coverage module): JaCoCo's report of the probes it recorded
    equals jinst's, and the loop of classify(27) shows its 111 turns."""
    agent = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(jinst))), "lib", "libjinst.so")
    if not os.path.isfile(agent) or "coverage=MODE" not in run(["java", f"-agentpath:{agent}=help"]).stdout:
        print("skip real run: no agent with the coverage module at " + agent)
        return
    out = os.path.join(work, "real")
    r = run(["java", f"-agentpath:{agent}=coverage=counts,include=demo.**,out={out}", "-cp", classes,
             "demo.shapes.Shapes"])
    check(r.returncode == 0 and r.stdout.startswith("7.14159"), "fixture run under the agent " + r.stderr[-300:])
    txt, ref_xml, ref_csv = out + ".txt", out + "-jacoco.xml", out + "-jacoco.csv"
    probes_from_dump(jinst, out + ".cov", txt)
    r = run(["java", "-cp", JACOCO_CP + ":" + os.path.join(work, "peer"), "JacocoReport", txt, classes,
             "fixture", ref_xml, ref_csv])
    check(r.returncode == 0, "JaCoCo's report of the run " + r.stderr.strip())
    xml, html = out + ".xml", out + "-html"
    r = run([jinst, "report", out + ".cov", "--classfiles", classes, "--sourcefiles", src, "--name", "fixture",
             "--xml", xml, "--html", html])
    check(r.returncode == 0 and canon(ET.parse(xml).getroot()) == canon(ET.parse(ref_xml).getroot()),
          "a real run: jinst's XML equals JaCoCo's for the probes the agent recorded " + r.stderr)
    rows = rendered_rows(chromium(["--dump-dom", "file://" + os.path.join(html, "demo.shapes",
                                                                         "Shapes.java.html")]).stdout)
    check(rows.get(59, ("", "", ""))[2] == "111×" and rows.get(56, ("", "", ""))[2] == "1×",
          f"a real run: classify(27)'s loop body shows 111 hits: {rows.get(59)}")
    info = out + ".info"
    run([jinst, "report", out + ".cov", "--classfiles", classes, "--lcov", info])
    with open(info) as f:
        fnda = {l.split(",", 1)[1].strip(): l[5:].split(",")[0] for l in f if l.startswith("FNDA:")}
    calls = {k: fnda.get("demo/shapes/Shapes::" + k) for k in ("classify(I)I", "main([Ljava/lang/String;)V")}
    check(calls == {"classify(I)I": "1", "main([Ljava/lang/String;)V": "1"},
          f"a real run: FNDA is the number of calls, not the highest line count {calls}")


def check_mismatch(jinst, cov_make, work, classes):
    cov = os.path.join(work, "wrong.cov")
    run([cov_make, "--wrong", "demo/util/Text", classes, "2", cov, os.path.join(work, "wrong.txt")])
    xml, html = os.path.join(work, "wrong.xml"), os.path.join(work, "wrong-html")
    r = run([jinst, "report", cov, "--classfiles", classes, "--xml", xml, "--html", html])
    check(r.returncode == 0 and "demo/util/Text has identity" in r.stderr, "mismatch named on stderr: " + r.stderr)
    names = [c.get("name") for c in ET.parse(xml).getroot().iter("class")]
    check("demo/util/Text" not in names and "demo/shapes/Shapes" in names, "mismatched class not counted as missed")
    with open(os.path.join(html, "index.html")) as f:
        check("Not reported: class <b>demo/util/Text</b>" in f.read(), "HTML index notes the mismatch")
    r = run([jinst, "report", cov, "--classfiles", classes])
    check("not reported: demo/util/Text" in r.stdout, "summary notes the mismatch")


def check_instrumented(jinst, work, cov, classes):
    """Classes jinst instrumented are refused as --classfiles: their code
    holds the probes (a class that never ran would count them as missed)."""
    out = os.path.join(work, "instrumented")
    shutil.rmtree(out, ignore_errors=True)
    r = run([jinst, "instrument", "--coverage", classes, "-o", out])
    check(r.returncode == 0, "fixture instrumented " + r.stderr.strip())
    xml = os.path.join(work, "instrumented.xml")
    r = run([jinst, "report", cov, "--classfiles", out, "--xml", xml])
    named = [l for l in r.stderr.splitlines() if "was instrumented by jinst (coverage)" in l]
    check(r.returncode == 1 and 1 <= len(named) <= 3 and "--classfiles takes the original classes" in r.stderr
          and not os.path.exists(xml),
          f"instrumented classes refused, at most 3 named, no report: {r.returncode} {r.stderr.strip()}")
    r = run([jinst, "report", cov, "--classfiles", classes, "--classfiles", out])
    check(r.returncode == 1, "refused beside the original classes too: " + r.stderr.strip())


def check_jar_and_summary(jinst, work, cov, xml, classes):
    jar = os.path.join(work, "fixture.jar")
    run(["jar", "cf", jar, "-C", classes, "."])
    outer = os.path.join(work, "outer.jar")
    with zipfile.ZipFile(outer, "w") as z:
        z.write(jar, "lib/fixture.jar")
    jxml = os.path.join(work, "jar.xml")
    r = run([jinst, "report", cov, "--classfiles", outer, "--name", "fixture", "--xml", jxml])
    check(r.returncode == 0 and canon(ET.parse(jxml).getroot()) == canon(ET.parse(xml).getroot()),
          "a nested jar as --classfiles gives the folder's report " + r.stderr)
    r = run([jinst, "report", cov, "--classfiles", classes])
    line = {c.get("type"): c.attrib for c in ET.parse(xml).getroot().findall("counter")}["LINE"]
    total = int(line["missed"]) + int(line["covered"])
    check(r.returncode == 0 and any(l.split()[:4] == ["lines", line["covered"], "of", str(total)]
                                    for l in r.stdout.splitlines()), "console summary:\n" + r.stdout)


def check_versions(jinst, work, cov, xml, classes):
    """Two class files of one name: the one the data were recorded for is
    reported, wherever it comes in the walk (a multi-release jar)."""
    other = os.path.join(work, "other")
    run(["javac", "--release", "11", "-g:none", "-d", other, os.path.join(HERE, "fixture", "demo", "util", "Text.java")])
    os.remove(os.path.join(other, "demo", "util", "Text$1.class"))
    for first, second in ((classes, other), (other, classes)):
        vxml = os.path.join(work, "versions.xml")
        r = run([jinst, "report", cov, "--classfiles", first, "--classfiles", second, "--name", "fixture",
                 "--xml", vxml])
        check(r.returncode == 0 and not r.stderr and canon(ET.parse(vxml).getroot()) == canon(ET.parse(xml).getroot()),
              f"two versions of a class, {os.path.basename(first)} first: the recorded one reported " + r.stderr)
    skip = os.path.join(work, "classes-v3--skipdemo_util_Text.cov")  # no record of Text
    r = run([jinst, "report", skip, "--classfiles", classes, "--classfiles", other])
    check(r.returncode == 0 and "demo/util/Text (identity" in r.stderr and "this one is not reported" in r.stderr,
          "two versions, no data for either: the first reported, the other named " + r.stderr)


def check_encoding(jinst, work, cov, classes, src):
    """A source with bytes that do not decode (Latin-1 in a UTF-8 report, as
    JaCoCo's InputStreamReader reads it): U+FFFD for each, the text shown;
    a Java charset name (ISO8859_1) decodes it."""
    latin = os.path.join(work, "src-latin1")
    shutil.copytree(src, latin)
    page = os.path.join(latin, "demo", "shapes", "Shapes.java")
    with open(page, "rb") as f:
        text = f.read().replace(b"The report's fixture", b"The report's caf\xe9 fixture", 1)
    with open(page, "wb") as f:
        f.write(text)
    for enc, want in ((None, "caf\ufffd fixture"), ("US-ASCII", "caf\ufffd fixture"), ("ISO8859_1", "café fixture")):
        html = os.path.join(work, f"html-{enc}")
        r = run([jinst, "report", cov, "--classfiles", classes, "--sourcefiles", latin, "--html", html]
                + (["--encoding", enc] if enc else []))
        try:
            with open(os.path.join(html, "demo.shapes", "Shapes.java.html"), "rb") as f:
                shown = f.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            shown = str(e)
        warned = "1 byte that does not decode" in r.stderr
        check(r.returncode == 0 and want in shown and "static int classify(int n)" in shown
              and warned == (enc != "ISO8859_1"),
              f"--encoding {enc}: a byte that does not decode is U+FFFD, the text shown " + r.stderr)


def check_errors(jinst, work, cov, classes):
    cases = [
        ([os.path.join(work, "none.cov"), "--classfiles", classes], 1, "none.cov"),
        ([cov, "--classfiles", classes, "--bogus"], 2, "unknown option --bogus"),
        ([cov], 2, "no --classfiles"),
        ([cov, "--classfiles", classes, "--xml", "/nonexistent/dir/r.xml"], 1, "cannot be written"),
        ([cov, "--classfiles", classes, "--xml", os.path.join(work, "r.xml") + "/"], 1, "names a folder"),
        ([cov, "--classfiles", classes, "--csv", work], 1, "names a folder"),
        ([cov, "--classfiles", classes, "--encoding", "NO-SUCH-ENC"], 1, "unknown encoding"),
        ([cov, "--classfiles", classes, "--html", HERE], 1, "not a jinst report"),
    ]
    damaged = os.path.join(work, "damaged.cov")
    with open(cov, "rb") as f, open(damaged, "wb") as g:
        g.write(f.read()[:-9])
    cases.append(([damaged, "--classfiles", classes], 1, "damaged.cov"))
    for args, code, text in cases:
        r = run([jinst, "report"] + args)
        lines = [l for l in r.stderr.splitlines() if l.startswith("jinst report")]
        check(r.returncode == code and text in r.stderr and len(lines) == 1,
              f"error exit {code} with one line naming '{text}': {r.returncode} {r.stderr.strip()}")
    mask = os.umask(0)
    os.umask(mask)
    modes = {p: oct(os.stat(os.path.join(work, p)).st_mode & 0o777) for p in ("classes-v2.xml", "html")}
    check(modes == {"classes-v2.xml": oct(0o666 & ~mask), "html": oct(0o777 & ~mask)},
          f"outputs have the modes of files the user writes {modes}")
    left = [f for f in os.listdir(work) if ".tmp." in f]
    check(not left, f"no temporary file left behind {left}")
    html = os.path.join(work, "html")
    r = run([jinst, "report", cov, "--classfiles", classes, "--html", html])
    check(r.returncode == 0, "an earlier jinst HTML report is replaced " + r.stderr)
    os.makedirs(os.path.join(work, "html-empty"))
    for name in ("html", "html-new", "html-empty"):
        r = run([jinst, "report", cov, "--classfiles", classes, "--html", os.path.join(work, name) + "//"])
        check(r.returncode == 0 and os.path.isfile(os.path.join(work, name, "index.html")),
              f"--html {name}/ written as without the slash " + r.stderr)
    left = [f for f in os.listdir(work) + os.listdir(html) if ".tmp." in f or ".old." in f]
    check(not left, f"no temporary or aside folder left behind {left}")


def main():
    jinst, cov_make, work = sys.argv[1:4]
    screenshot = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--screenshot" else None
    classes, src = setup(work)
    for v in range(5):
        compare_with_jacoco(jinst, cov_make, work, classes, v, [])
    compare_with_jacoco(jinst, cov_make, work, classes, 3, ["--skip", "demo/util/Text"])
    cov, xml = compare_with_jacoco(jinst, cov_make, work, classes, 2, [])
    jar = os.path.join(JAVA, "commons-lang3.jar")  # 362 classes, synthetic ones among them
    if os.path.isfile(jar):
        compare_with_jacoco(jinst, cov_make, work, real_jar_classes(work, jar), 2, [])
    check_lcov(jinst, work, cov, src, classes)
    check_html(jinst, work, cov, xml, src, classes, screenshot)
    check_counts(jinst, cov_make, work, classes, src)
    check_real_run(jinst, work, classes, src)
    check_mismatch(jinst, cov_make, work, classes)
    check_instrumented(jinst, work, cov, classes)
    check_jar_and_summary(jinst, work, cov, xml, classes)
    check_versions(jinst, work, cov, xml, classes)
    check_encoding(jinst, work, cov, classes, src)
    check_errors(jinst, work, cov, classes)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
