/*
 * Lucene (Debian's liblucene8-java: core, analyzers-common, queryparser)
 * indexing documents made from fixed data into memory, through its English
 * analysis (stop words, Porter stemming), and searching them:
 * the classic query parser (terms, boolean operators, phrases, wildcards,
 * fuzzy terms), point ranges, sorting by a doc-values field, and stored
 * fields read back. Every hit (document, score, field) goes into the
 * checksum.
 *
 *   LuceneWorkload SCALE      (SCALE: thousands of documents)
 *
 * Single-threaded and deterministic: the serial merge scheduler merges in
 * the indexing thread, and the searcher has no executor.
 */
import java.io.IOException;

import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.index.Term;
import org.apache.lucene.queryparser.classic.ParseException;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;

public final class LuceneWorkload {
    private static final String[] WORDS = {"search", "engine", "index", "query", "lucene", "java", "token",
        "analyzer", "document", "field", "score", "ranking", "segment", "merge", "commit", "reader",
        "writer", "vector", "posting", "phrase", "fuzzy", "wildcard", "boolean", "filter", "facet",
        "highlight", "stemming", "synonym", "language", "corpus", "retrieval", "relevance"};
    private static final String[] QUERIES = {
        "lucene", "search AND engine", "query OR phrase -fuzzy", "\"search engine\"", "ind*",
        "relevanse~2", "title:merge^2 body:segment", "+analyzer +(token OR synonym)", "\"index query\"~3",
        "w?ldcard OR boolean", "corpus AND NOT retrieval", "(score OR ranking) AND (vector OR posting)",
    };

    public static void main(String[] args) throws IOException, ParseException {
        int scale = Checksum.scale(args);
        Checksum sum = new Checksum();
        EnglishAnalyzer analyzer = new EnglishAnalyzer();
        try (ByteBuffersDirectory dir = new ByteBuffersDirectory()) {
            IndexWriterConfig config = new IndexWriterConfig(analyzer)
                .setMergeScheduler(new SerialMergeScheduler())
                .setMaxBufferedDocs(500);
            try (IndexWriter writer = new IndexWriter(dir, config)) {
                long x = 7;
                for (int i = 0; i < scale * 1000; i++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                    writer.addDocument(document(i, x));
                }
                writer.deleteDocuments(new Term("id", "d17"), new Term("id", "d99"));
                writer.commit();
                writer.forceMerge(2);
            }
            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                search(new IndexSearcher(reader), analyzer, sum);
            }
        }
        sum.print("lucene");
    }

    static Document document(int i, long x) {
        StringBuilder title = new StringBuilder();
        StringBuilder body = new StringBuilder();
        for (int w = 0; w < 3; w++) {
            title.append(WORDS[(int) ((x >>> (5 * w + 3)) & 31)]).append(' ');
        }
        long y = x;
        for (int w = 0; w < 40; w++) {
            y = y * 2862933555777941757L + 3037000493L;
            body.append(WORDS[(int) ((y >>> 40) & 31)]).append(w % 9 == 8 ? ". " : " ");
        }
        int year = 1990 + (int) ((x >>> 20) % 35);
        Document d = new Document();
        d.add(new StringField("id", "d" + i, Field.Store.YES));
        d.add(new TextField("title", title.toString(), Field.Store.YES));
        d.add(new TextField("body", body.toString(), Field.Store.NO));
        d.add(new IntPoint("year", year));
        d.add(new NumericDocValuesField("year", year));
        d.add(new StoredField("year", year));
        return d;
    }

    static void search(IndexSearcher searcher, EnglishAnalyzer analyzer, Checksum sum)
            throws IOException, ParseException {
        QueryParser parser = new QueryParser("body", analyzer);
        for (String q : QUERIES) {
            hits(searcher, parser.parse(q), null, sum);
            hits(searcher, parser.parse(q), new Sort(new SortField("year", SortField.Type.INT, true),
                SortField.FIELD_DOC), sum);
        }
        for (int from = 1990; from < 2025; from += 5) {
            Query q = new BooleanQuery.Builder()
                .add(IntPoint.newRangeQuery("year", from, from + 4), BooleanClause.Occur.FILTER)
                .add(new TermQuery(new Term("title", WORDS[from % WORDS.length])), BooleanClause.Occur.MUST)
                .build();
            sum.add(searcher.count(q));
            hits(searcher, q, null, sum);
        }
    }

    static void hits(IndexSearcher searcher, Query q, Sort sort, Checksum sum) throws IOException {
        TopDocs top = sort == null ? searcher.search(q, 25) : searcher.search(q, 25, sort);
        sum.add(q.toString() + " " + top.totalHits);
        for (ScoreDoc d : top.scoreDocs) {
            Document doc = searcher.doc(d.doc);
            sum.add(doc.get("id") + " " + doc.get("year") + " " + Float.floatToIntBits(d.score));
        }
    }
}
