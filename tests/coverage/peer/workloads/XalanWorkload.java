/*
 * Xalan-Java (Debian's libxalan2-java, its interpretive processor, with
 * Xerces parsing) applying style.xsl to a catalogue of books made from fixed
 * data, one catalogue per round; every output document goes into the
 * checksum.
 *
 *   XalanWorkload SCALE STYLESHEET
 *
 * The factory is Xalan's by name, not JAXP's lookup, which would find the
 * JDK's own copy of XSLTC first.
 */
import java.io.File;
import java.io.StringReader;
import java.io.StringWriter;

import javax.xml.transform.Templates;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerException;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;

import org.apache.xalan.processor.TransformerFactoryImpl;

public final class XalanWorkload {
    private static final String[] WORDS = {"the", "river", "of", "night", "glass", "garden", "a", "silent",
        "engine", "winter", "letters", "from", "north", "city", "machine", "light", "and", "stone"};
    private static final String[] FIRST = {"Ada", "Brian", "Chen", "Dora", "Emil", "Fatima", "Goran", "Hana"};
    private static final String[] LAST = {"Lovelace", "Kernighan", "Wei", "Maar", "Zola", "Haddad", "Bregovic"};
    private static final String[] CATEGORIES = {"fiction", "science", "history", "poetry", "travel", "drama"};

    public static void main(String[] args) throws TransformerException {
        int rounds = Checksum.scale(args);
        TransformerFactoryImpl factory = new TransformerFactoryImpl();
        Templates templates = factory.newTemplates(new StreamSource(new File(args[1])));
        Checksum sum = new Checksum();
        for (int round = 0; round < rounds; round++) {
            Transformer t = templates.newTransformer();
            t.setParameter("currency", round % 2 == 0 ? "EUR" : "CHF");
            StringWriter out = new StringWriter();
            t.transform(new StreamSource(new StringReader(catalogue(round, 300))), new StreamResult(out));
            sum.add(out.toString());
        }
        sum.print("xalan");
    }

    /* A catalogue of n books from a linear congruential sequence seeded by round. */
    static String catalogue(int round, int n) {
        long x = 12345 + round;
        StringBuilder b = new StringBuilder("<?xml version=\"1.0\"?>\n<catalogue>\n");
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            int r = (int) (x >>> 33);
            b.append("  <book id=\"b").append(i).append("\" category=\"")
                .append(CATEGORIES[r % CATEGORIES.length]).append("\">\n    <title>");
            int words = 1 + r % 4;
            for (int w = 0; w < words; w++) {
                b.append(w > 0 ? " " : "").append(WORDS[(r >>> (4 * w)) % WORDS.length]);
            }
            b.append("</title>\n    <author>").append(FIRST[(r >>> 3) % FIRST.length]).append(' ')
                .append(LAST[(r >>> 7) % LAST.length]).append("</author>\n    <year>")
                .append(1950 + (r >>> 11) % 75).append("</year>\n    <price>")
                .append((r >>> 5) % 9000 / 100.0).append("</price>\n    <tags>");
            for (int t = 0; t < r % 3; t++) {
                b.append("<tag>").append(WORDS[(r >>> (2 + t)) % WORDS.length]).append("</tag>");
            }
            b.append("</tags>\n  </book>\n");
        }
        return b.append("</catalogue>\n").toString();
    }
}
