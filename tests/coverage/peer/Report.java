/*
 * JaCoCo's report from .exec files and class files, through Debian's
 * org.jacoco.core and org.jacoco.report (0.8.6): the reference that jinst's
 * reports are compared with. Its flags are those of `jacococli report`:
 *
 *   Report EXEC... --classfiles PATH [--classfiles PATH...] [--sourcefiles DIR...]
 *          [--xml FILE] [--csv FILE] [--html DIR] [--name NAME] [--flatten DIR]
 *
 * jacococli itself is not in Debian's package, and it could not be used as
 * is: a multi-release jar (lucene-core) holds a class twice, at its name and
 * under META-INF/versions/N/, and JaCoCo 0.8.6 analyses both and refuses the
 * second ("Can't add different class with same name"). This tool analyses
 * what the running VM loads: for each class name the entry of the highest
 * version not above the VM's feature version, else the base entry. --flatten
 * writes exactly the classes analysed into a folder, so that another tool
 * can be given the very same class files.
 *
 * Prints one summary line: classes analysed, execution data records, and
 * the records that matched a class by name but not by identity (JaCoCo's
 * "no match"), which a comparison must know about.
 */
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.analysis.IBundleCoverage;
import org.jacoco.core.tools.ExecFileLoader;
import org.jacoco.report.DirectorySourceFileLocator;
import org.jacoco.report.FileMultiReportOutput;
import org.jacoco.report.IReportVisitor;
import org.jacoco.report.ISourceFileLocator;
import org.jacoco.report.MultiSourceFileLocator;
import org.jacoco.report.csv.CSVFormatter;
import org.jacoco.report.html.HTMLFormatter;
import org.jacoco.report.xml.XMLFormatter;

public final class Report {
    private final List<File> execs = new ArrayList<>();
    private final List<File> classfiles = new ArrayList<>();
    private final List<File> sourcefiles = new ArrayList<>();
    private File xml, csv, html, flatten;
    private String name = "jinst peer";

    public static void main(String[] args) throws IOException {
        Report r = new Report();
        r.parse(args);
        r.run();
    }

    private void parse(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                execs.add(new File(a));
                continue;
            }
            if (i + 1 >= args.length) {
                usage(a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
            case "--classfiles": classfiles.add(new File(v)); break;
            case "--sourcefiles": sourcefiles.add(new File(v)); break;
            case "--xml": xml = new File(v); break;
            case "--csv": csv = new File(v); break;
            case "--html": html = new File(v); break;
            case "--name": name = v; break;
            case "--flatten": flatten = new File(v); break;
            default: usage("unknown option " + a);
            }
        }
        if (classfiles.isEmpty()) {
            usage("no --classfiles");
        }
    }

    private static void usage(String why) {
        System.err.println("Report: " + why);
        System.err.println("usage: Report EXEC... --classfiles PATH... [--sourcefiles DIR...]"
                + " [--xml FILE] [--csv FILE] [--html DIR] [--name NAME] [--flatten DIR]");
        System.exit(2);
    }

    private void run() throws IOException {
        ExecFileLoader loader = new ExecFileLoader();
        for (File f : execs) {
            loader.load(f);
        }
        Map<String, byte[]> classes = new TreeMap<>();
        for (File f : classfiles) {
            collect(f, classes);
        }
        CoverageBuilder builder = new CoverageBuilder();
        Analyzer analyzer = new Analyzer(loader.getExecutionDataStore(), builder);
        for (Map.Entry<String, byte[]> e : classes.entrySet()) {
            analyzer.analyzeClass(e.getValue(), e.getKey());
            if (flatten != null) {
                File out = new File(flatten, e.getKey());
                out.getParentFile().mkdirs();
                Files.write(out.toPath(), e.getValue());
            }
        }
        IBundleCoverage bundle = builder.getBundle(name);
        System.out.printf("Report: %d class files, %d execution data records, %d with no matching class identity%n",
                classes.size(), loader.getExecutionDataStore().getContents().size(),
                builder.getNoMatchClasses().size());
        if (xml != null) {
            write(new XMLFormatter().createVisitor(new FileOutputStream(xml)), loader, bundle);
        }
        if (csv != null) {
            write(new CSVFormatter().createVisitor(new FileOutputStream(csv)), loader, bundle);
        }
        if (html != null) {
            write(new HTMLFormatter().createVisitor(new FileMultiReportOutput(html)), loader, bundle);
        }
    }

    private void write(IReportVisitor visitor, ExecFileLoader loader, IBundleCoverage bundle)
            throws IOException {
        MultiSourceFileLocator sources = new MultiSourceFileLocator(4);
        for (File dir : sourcefiles) {
            sources.add(new DirectorySourceFileLocator(dir, "UTF-8", 4));
        }
        ISourceFileLocator locator = sources;
        visitor.visitInfo(loader.getSessionInfoStore().getInfos(),
                loader.getExecutionDataStore().getContents());
        visitor.visitBundle(bundle, locator);
        visitor.visitEnd();
    }

    /* Class files of a path, keyed by class file name (a/b/C.class). */
    private static void collect(File f, Map<String, byte[]> out) throws IOException {
        if (f.isDirectory()) {
            File[] children = f.listFiles();
            if (children == null) {
                throw new IOException("cannot list " + f);
            }
            for (File c : children) {
                collectDir(c, c.getName(), out);
            }
        } else if (f.getName().endsWith(".class")) {
            out.put(f.getName(), Files.readAllBytes(f.toPath()));
        } else {
            collectJar(f, out);
        }
    }

    private static void collectDir(File f, String rel, Map<String, byte[]> out) throws IOException {
        if (f.isDirectory()) {
            File[] children = f.listFiles();
            if (children == null) {
                throw new IOException("cannot list " + f);
            }
            for (File c : children) {
                collectDir(c, rel + "/" + c.getName(), out);
            }
        } else if (rel.endsWith(".class")) {
            out.put(rel, Files.readAllBytes(f.toPath()));
        }
    }

    /* A jar's classes as this VM loads them: of META-INF/versions/N/X.class
       the highest N not above the VM's feature version replaces X.class
       (JAR File Specification, "Multi-release JAR files"). */
    private static void collectJar(File f, Map<String, byte[]> out) throws IOException {
        int feature = Runtime.version().feature();
        Map<String, Integer> version = new TreeMap<>();
        String prefix = "META-INF/versions/";
        try (ZipFile zip = new ZipFile(f)) {
            Enumeration<? extends ZipEntry> entries = zip.entries();
            while (entries.hasMoreElements()) {
                ZipEntry e = entries.nextElement();
                String n = e.getName();
                if (e.isDirectory() || !n.endsWith(".class") || n.endsWith("module-info.class")) {
                    continue;
                }
                int v = 0;
                if (n.startsWith(prefix)) {
                    int slash = n.indexOf('/', prefix.length());
                    v = Integer.parseInt(n.substring(prefix.length(), slash));
                    if (v > feature) {
                        continue;
                    }
                    n = n.substring(slash + 1);
                }
                Integer seen = version.get(n);
                if (seen != null && seen > v) {
                    continue;
                }
                version.put(n, v);
                try (InputStream in = zip.getInputStream(e)) {
                    out.put(n, in.readAllBytes());
                }
            }
        }
    }
}
