import java.io.StringReader;
import java.io.StringWriter;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.xml.transform.Templates;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;

/*
 * Server-style work on real libraries from Debian's packages: JDBC queries on
 * an in-memory H2 database and XSLT transforms with Xalan (its own
 * TransformerFactory, not the JDK's XSLTC), each request a task submitted to
 * an ExecutorService, as an application server's pool runs them:
 *
 *   ServerWork main|pool|virtual THREADS REQUESTS [WARMUP]
 *
 * main runs the requests one after another on the main thread; pool on a
 * fixed pool of THREADS platform threads; virtual one virtual thread each
 * (JDK 21 on, by reflection). Prints a checksum of every request's result,
 * the same whoever runs them (bench/trace compares it). With WARMUP, that
 * many requests run first, by the same threads, and the REQUESTS after them
 * are timed: "ServerWork steady: N ns" (a server's rate once the JIT has
 * compiled its code, where the whole run is mostly start-up and warm-up).
 */
public class ServerWork {
	static final String URL = "jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1";
	static Templates xslt;

	static final String STYLE = "<xsl:stylesheet version='1.0' xmlns:xsl='http://www.w3.org/1999/XSL/Transform'>"
			+ "<xsl:template match='/orders'><report><xsl:for-each select='order'>"
			+ "<xsl:sort select='@total' data-type='number' order='descending'/>"
			+ "<line id='{@id}' big='{@total &gt; 500}'><xsl:value-of select='concat(@customer, \":\", sum(item/@price))'/>"
			+ "</line></xsl:for-each><count><xsl:value-of select='count(order/item)'/></count></report>"
			+ "</xsl:template></xsl:stylesheet>";

	static void setUp() throws Exception {
		try (Connection c = DriverManager.getConnection(URL); Statement s = c.createStatement()) {
			s.execute("CREATE TABLE item(id INT PRIMARY KEY, cat INT, name VARCHAR(40), price DECIMAL(10,2))");
			try (PreparedStatement p = c.prepareStatement("INSERT INTO item VALUES(?, ?, ?, ?)")) {
				for (int i = 0; i < 2000; i++) {
					p.setInt(1, i);
					p.setInt(2, i % 37);
					p.setString(3, "item-" + (i * 7919 % 2000));
					p.setBigDecimal(4, new java.math.BigDecimal((i * 31 % 1000) + ".25"));
					p.addBatch();
				}
				p.executeBatch();
			}
			s.execute("CREATE INDEX item_cat ON item(cat)");
		}
		TransformerFactory f = new org.apache.xalan.processor.TransformerFactoryImpl();
		xslt = f.newTemplates(new StreamSource(new StringReader(STYLE)));
	}

	static long query(int i) throws Exception {
		long h = 0;
		try (Connection c = DriverManager.getConnection(URL);
				PreparedStatement p = c.prepareStatement(
						"SELECT cat, COUNT(*), SUM(price), MAX(name) FROM item WHERE cat BETWEEN ? AND ? GROUP BY cat ORDER BY cat")) {
			p.setInt(1, i % 30);
			p.setInt(2, i % 30 + 6);
			try (ResultSet r = p.executeQuery()) {
				while (r.next())
					h = h * 31 + r.getInt(1) * 7 + r.getLong(2) + r.getBigDecimal(3).hashCode() + r.getString(4).hashCode();
			}
		}
		return h;
	}

	static long transform(int i) throws Exception {
		StringBuilder x = new StringBuilder("<orders>");
		for (int o = 0; o < 40; o++) {
			int total = (i * 13 + o * 97) % 1000;
			x.append("<order id='").append(o).append("' customer='c").append((i + o) % 17).append("' total='")
					.append(total).append("'>");
			for (int k = 0; k < 5; k++)
				x.append("<item price='").append((total + k * 11) % 200).append("'/>");
			x.append("</order>");
		}
		x.append("</orders>");
		Transformer t = xslt.newTransformer();
		StringWriter w = new StringWriter();
		t.transform(new StreamSource(new StringReader(x.toString())), new StreamResult(w));
		return w.toString().hashCode();
	}

	static long request(int i) throws Exception {
		return i % 2 == 0 ? query(i) : transform(i);
	}

	public static void main(String[] args) throws Exception {
		String how = args[0];
		int threads = Integer.parseInt(args[1]), requests = Integer.parseInt(args[2]);
		int warmup = args.length > 3 ? Integer.parseInt(args[3]) : 0;
		setUp();
		ExecutorService ex = how.equals("main") ? null : how.equals("pool") ? Executors.newFixedThreadPool(threads) : virtual();
		long sum = run(ex, 0, warmup);
		long start = System.nanoTime();
		sum += run(ex, warmup, warmup + requests);
		long steady = System.nanoTime() - start;
		if (ex != null)
			ex.shutdown();
		System.out.println("ServerWork " + (warmup + requests) + " requests, checksum " + sum);
		if (warmup > 0)
			System.out.println("ServerWork steady: " + steady + " ns for " + requests + " requests after " + warmup);
	}

	/* Requests from to end on the main thread (ex null) or by ex: the sum of their results. */
	static long run(ExecutorService ex, int from, int end) throws Exception {
		long sum = 0;
		if (ex == null) {
			for (int i = from; i < end; i++)
				sum += request(i);
			return sum;
		}
		List<Future<Long>> fs = new ArrayList<>();
		for (int i = from; i < end; i++) {
			final int j = i;
			fs.add(ex.submit((Callable<Long>) () -> request(j)));
		}
		for (Future<Long> f : fs)
			sum += f.get();
		return sum;
	}

	static ExecutorService virtual() throws Exception {
		Method m = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
		return (ExecutorService) m.invoke(null);
	}
}
