/*
 * H2 (Debian's libh2-java) running SQL in memory through JDBC: tables,
 * inserts through prepared statements, indexes, joins, aggregates, grouping,
 * subqueries, window functions, updates and deletes; every row of every
 * query goes into the checksum. One connection, so one thread runs the SQL.
 *
 *   H2Workload SCALE      (SCALE: thousands of orders)
 */
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;

public final class H2Workload {
    private static final String[] QUERIES = {
        "SELECT c.region, COUNT(*), SUM(o.amount), MIN(o.amount), MAX(o.amount) FROM orders o"
            + " JOIN customers c ON c.id = o.customer_id GROUP BY c.region ORDER BY c.region",
        "SELECT p.name, SUM(l.quantity) q FROM lines l JOIN products p ON p.id = l.product_id"
            + " GROUP BY p.name HAVING SUM(l.quantity) > 10 ORDER BY q DESC, p.name LIMIT 20",
        "SELECT c.name, o.id, o.amount FROM customers c LEFT JOIN orders o ON o.customer_id = c.id"
            + " WHERE c.id % 37 = 0 ORDER BY c.name, o.id",
        "SELECT id, amount FROM orders WHERE amount > (SELECT AVG(amount) * 1.9 FROM orders) ORDER BY id",
        "SELECT customer_id, id, amount, RANK() OVER (PARTITION BY customer_id ORDER BY amount DESC, id)"
            + " FROM orders WHERE customer_id < 20 ORDER BY customer_id, id",
        "SELECT status, CAST(AVG(amount) AS DECIMAL(12,2)), COUNT(DISTINCT customer_id) FROM orders"
            + " GROUP BY status ORDER BY status",
        "SELECT p.category, COUNT(DISTINCT l.order_id), SUM(l.quantity * p.price) FROM lines l"
            + " JOIN products p ON p.id = l.product_id JOIN orders o ON o.id = l.order_id"
            + " WHERE o.status <> 'cancelled' GROUP BY p.category ORDER BY p.category",
        "SELECT name FROM customers WHERE name LIKE 'c%7' OR UPPER(region) = 'NORTH' AND id BETWEEN 100 AND 140"
            + " ORDER BY name",
        "SELECT c.id FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)"
            + " ORDER BY c.id",
        "SELECT EXTRACT(YEAR FROM placed), EXTRACT(MONTH FROM placed), COUNT(*) FROM orders"
            + " GROUP BY EXTRACT(YEAR FROM placed), EXTRACT(MONTH FROM placed) ORDER BY 1, 2",
    };

    public static void main(String[] args) throws SQLException {
        int scale = Checksum.scale(args);
        Checksum sum = new Checksum();
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:workload", "sa", "")) {
            schema(c);
            fill(c, scale * 1000);
            for (int pass = 0; pass < 3; pass++) {
                for (String q : QUERIES) {
                    query(c, q, sum);
                }
                change(c, pass, sum);
            }
        }
        sum.print("h2");
    }

    static void schema(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, region VARCHAR(10))");
            s.execute("CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(40), category VARCHAR(20),"
                + " price DECIMAL(10,2))");
            s.execute("CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT REFERENCES customers(id),"
                + " placed DATE, status VARCHAR(12), amount DECIMAL(12,2))");
            s.execute("CREATE TABLE lines (order_id INT REFERENCES orders(id), product_id INT REFERENCES"
                + " products(id), quantity INT, PRIMARY KEY (order_id, product_id))");
            s.execute("CREATE INDEX orders_customer ON orders(customer_id)");
            s.execute("CREATE INDEX orders_status_amount ON orders(status, amount)");
            s.execute("CREATE INDEX lines_product ON lines(product_id)");
        }
    }

    static void fill(Connection c, int orders) throws SQLException {
        String[] regions = {"north", "south", "east", "west", "centre"};
        String[] categories = {"tools", "books", "food", "toys", "garden", "music"};
        String[] statuses = {"new", "paid", "shipped", "cancelled"};
        int customers = orders / 10;
        c.setAutoCommit(false);
        try (PreparedStatement p = c.prepareStatement("INSERT INTO customers VALUES (?, ?, ?)")) {
            for (int i = 0; i < customers; i++) {
                p.setInt(1, i);
                p.setString(2, "c" + (i * 7919 % 100003));
                p.setString(3, i % 11 == 0 ? null : regions[i % regions.length]);
                p.executeUpdate();
            }
        }
        try (PreparedStatement p = c.prepareStatement("INSERT INTO products VALUES (?, ?, ?, ?)")) {
            for (int i = 0; i < 200; i++) {
                p.setInt(1, i);
                p.setString(2, "product-" + i);
                p.setString(3, categories[i % categories.length]);
                p.setBigDecimal(4, java.math.BigDecimal.valueOf(100 + i * 37 % 5000, 2));
                p.executeUpdate();
            }
        }
        long x = 42;
        try (PreparedStatement o = c.prepareStatement("INSERT INTO orders VALUES (?, ?, ?, ?, ?)");
                PreparedStatement l = c.prepareStatement("INSERT INTO lines VALUES (?, ?, ?)")) {
            for (int i = 0; i < orders; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
                int r = (int) (x >>> 33);
                o.setInt(1, i);
                o.setInt(2, (r % customers) / 2 * 2); /* odd customers never order */
                o.setDate(3, java.sql.Date.valueOf(java.time.LocalDate.of(2020, 1, 1).plusDays(r % 1200)));
                o.setString(4, statuses[(r >>> 7) % statuses.length]);
                o.setBigDecimal(5, java.math.BigDecimal.valueOf((r >>> 3) % 100000, 2));
                o.executeUpdate();
                for (int k = 0; k < 1 + r % 3; k++) {
                    l.setInt(1, i);
                    l.setInt(2, (r >>> (5 + k)) % 198 / 3 * 3 + k);
                    l.setInt(3, 1 + (r >>> k) % 9);
                    l.executeUpdate();
                }
            }
        }
        c.commit();
        c.setAutoCommit(true);
    }

    static void change(Connection c, int pass, Checksum sum) throws SQLException {
        try (Statement s = c.createStatement()) {
            sum.add(s.executeUpdate("UPDATE orders SET status = 'shipped' WHERE status = 'paid' AND id % "
                + (3 + pass) + " = 0"));
            sum.add(s.executeUpdate("DELETE FROM lines WHERE quantity = " + (pass + 1) + " AND order_id % 5 = 0"));
            sum.add(s.executeUpdate("UPDATE products SET price = price * 1.05 WHERE category = 'books'"));
        }
    }

    static void query(Connection c, String sql, Checksum sum) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            ResultSetMetaData md = rs.getMetaData();
            StringBuilder row = new StringBuilder();
            while (rs.next()) {
                row.setLength(0);
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    row.append(rs.getString(i)).append('|');
                }
                sum.add(row.toString());
            }
        }
    }
}
