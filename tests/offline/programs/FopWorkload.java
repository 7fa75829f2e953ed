/*
 * Apache FOP (Debian's libfop-java) laying out XSL-FO documents made from
 * fixed data, one a round, and rendering each to FOP's area tree (the
 * result of layout, as XML) and to PDF; both outputs go into the checksum.
 *
 *   FopWorkload SCALE      (SCALE: documents)
 *
 * What a PDF holds of the moment and of the run is kept out: the creation
 * date is fixed by the user agent, and the lines that carry dates or the
 * file identifier are left out of the checksum. The base-14 fonts only, so
 * no font of the machine is looked up. The FO is parsed by the JDK's JAXP
 * (identity transform to FOP's SAX handler), so what runs is FOP's own code
 * with Batik, XML Graphics Commons and Commons IO under it.
 */
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.Date;

import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.sax.SAXResult;
import javax.xml.transform.stream.StreamSource;

import org.apache.fop.apps.FOUserAgent;
import org.apache.fop.apps.Fop;
import org.apache.fop.apps.FopFactory;
import org.apache.fop.apps.MimeConstants;

public final class FopWorkload {
    private static final String[] WORDS = {"the", "layout", "of", "pages", "flows", "through", "regions", "and",
        "columns", "where", "blocks", "break", "across", "lines", "with", "justified", "text", "hyphens"};
    private static final String[] FONTS = {"Helvetica", "Times", "Courier"};

    public static void main(String[] args) throws Exception {
        int rounds = Checksum.scale(args);
        FopFactory factory = FopFactory.newInstance(new File(".").toURI());
        TransformerFactory tf = TransformerFactory.newInstance();
        Checksum sum = new Checksum();
        for (int round = 0; round < rounds; round++) {
            String fo = document(round, 40 + 20 * (round % 3));
            sum.add(render(factory, tf, fo, MimeConstants.MIME_FOP_AREA_TREE));
            sum.add(withoutMoment(render(factory, tf, fo, MimeConstants.MIME_PDF)));
        }
        sum.print("fop");
    }

    static String render(FopFactory factory, TransformerFactory tf, String fo, String mime) throws Exception {
        FOUserAgent agent = factory.newFOUserAgent();
        agent.setCreationDate(new Date(0));
        agent.setProducer("jinst");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Fop fop = factory.newFop(mime, agent, out);
        Transformer t = tf.newTransformer();
        t.transform(new StreamSource(new StringReader(fo)), new SAXResult(fop.getDefaultHandler()));
        return new String(out.toByteArray(), StandardCharsets.ISO_8859_1);
    }

    /* The PDF's lines but those naming a date or the file identifier. */
    static String withoutMoment(String pdf) {
        StringBuilder b = new StringBuilder();
        for (String line : pdf.split("\n", -1)) {
            if (!line.contains("Date") && !line.contains("/ID ") && !line.contains("xmp:")
                    && !line.contains("uuid:")) {
                b.append(line).append('\n');
            }
        }
        return b.toString();
    }

    /* A document of n sections from a linear congruential sequence seeded by round. */
    static String document(int round, int n) {
        long x = 777 + round;
        StringBuilder b = new StringBuilder("<?xml version=\"1.0\"?>\n<fo:root xmlns:fo=\"http://www.w3.org/1999/XSL/Format\">\n"
            + "<fo:layout-master-set><fo:simple-page-master master-name=\"p\" page-height=\"297mm\" page-width=\"210mm\""
            + " margin=\"15mm\"><fo:region-body margin-top=\"12mm\" margin-bottom=\"10mm\" column-count=\""
            + (1 + round % 2) + "\" column-gap=\"6mm\"/><fo:region-before extent=\"10mm\"/><fo:region-after extent=\"8mm\"/>"
            + "</fo:simple-page-master></fo:layout-master-set>\n"
            + "<fo:page-sequence master-reference=\"p\"><fo:static-content flow-name=\"xsl-region-before\">"
            + "<fo:block font-size=\"8pt\" text-align=\"end\"><fo:retrieve-marker retrieve-class-name=\"s\"/></fo:block>"
            + "</fo:static-content><fo:static-content flow-name=\"xsl-region-after\"><fo:block font-size=\"8pt\""
            + " text-align=\"center\">page <fo:page-number/> of <fo:page-number-citation ref-id=\"end\"/></fo:block>"
            + "</fo:static-content>\n<fo:flow flow-name=\"xsl-region-body\">\n");
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            int r = (int) (x >>> 33);
            b.append("<fo:block id=\"s").append(i).append("\" space-before=\"4pt\" font-family=\"")
                .append(FONTS[r % FONTS.length]).append("\" font-size=\"").append(8 + r % 5)
                .append("pt\" text-align=\"").append(r % 4 == 0 ? "justify" : "start").append("\">")
                .append("<fo:marker marker-class-name=\"s\">section ").append(i).append("</fo:marker>")
                .append("<fo:inline font-weight=\"bold\">").append(i + 1).append(". ").append(words(r, 3))
                .append("</fo:inline> ").append(words(r >>> 5, 20 + r % 40));
            if (r % 5 == 0) {
                b.append("<fo:footnote><fo:inline baseline-shift=\"super\">").append(i).append("</fo:inline>")
                    .append("<fo:footnote-body><fo:block font-size=\"7pt\">").append(words(r >>> 9, 8))
                    .append("</fo:block></fo:footnote-body></fo:footnote>");
            }
            b.append(" see <fo:page-number-citation ref-id=\"s").append((i * 7) % n).append("\"/>.</fo:block>\n");
            if (r % 3 == 0) {
                table(b, r);
            } else if (r % 3 == 1) {
                list(b, r);
            } else {
                b.append("<fo:block text-align-last=\"justify\">").append(words(r, 2))
                    .append("<fo:leader leader-pattern=\"dots\"/>").append(r % 1000).append("</fo:block>\n");
            }
        }
        return b.append("<fo:block id=\"end\"/></fo:flow></fo:page-sequence></fo:root>\n").toString();
    }

    static void table(StringBuilder b, int r) {
        int rows = 2 + r % 6;
        b.append("<fo:table table-layout=\"fixed\" width=\"100%\" border=\"0.5pt solid black\">")
            .append("<fo:table-column column-width=\"30%\"/><fo:table-column column-width=\"70%\"/><fo:table-body>");
        for (int i = 0; i < rows; i++) {
            b.append("<fo:table-row><fo:table-cell border=\"0.5pt solid gray\" padding=\"1pt\"><fo:block>")
                .append(words(r + i, 1)).append("</fo:block></fo:table-cell><fo:table-cell padding=\"1pt\"")
                .append(i % 2 == 0 ? " background-color=\"#eeeeee\"" : "").append("><fo:block>")
                .append(words(r >>> i, 4 + i)).append("</fo:block></fo:table-cell></fo:table-row>");
        }
        b.append("</fo:table-body></fo:table>\n");
    }

    static void list(StringBuilder b, int r) {
        b.append("<fo:list-block provisional-distance-between-starts=\"8mm\">");
        for (int i = 0; i < 1 + r % 4; i++) {
            b.append("<fo:list-item><fo:list-item-label end-indent=\"label-end()\"><fo:block>").append(i + 1)
                .append(")</fo:block></fo:list-item-label><fo:list-item-body start-indent=\"body-start()\"><fo:block>")
                .append(words(r >>> i, 6)).append("</fo:block></fo:list-item-body></fo:list-item>");
        }
        b.append("</fo:list-block>\n");
    }

    static String words(int r, int n) {
        StringBuilder b = new StringBuilder();
        int v = r & 0x7fffffff;
        for (int i = 0; i < n; i++) {
            b.append(i > 0 ? " " : "").append(WORDS[(v + 7 * i) % WORDS.length]);
            v = v * 31 + 17 & 0x7fffffff;
        }
        return b.toString();
    }
}
