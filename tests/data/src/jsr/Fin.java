/* try/finally, synchronized, nested and looping finally blocks compiled by
 * ecj for Java 1.4 (tests/data/regen.sh): subroutines reached by jsr and
 * left by ret, as real compilers made them. main prints what every method
 * computes, so a rewritten class can be compared with the original. */
public class Fin {
    static int counter;
    static int a(int x) { try { x++; return x; } finally { counter += x; } }
    static int b(int x) {
        try {
            try { if (x > 3) throw new RuntimeException("big"); x *= 2; }
            finally { counter++; if (x == 0) return -1; }
        } catch (RuntimeException e) { x = 100; }
        finally { counter += 10; }
        return x;
    }
    static int c(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            try { if (i == 2) continue; if (i == 5) break; s += i; }
            finally { s += 100; switch (i) { case 0: s++; break; case 1: s += 2; break; default: s += 3; } }
        }
        return s;
    }
    static synchronized int d(Object o, int x) {
        synchronized (o) { try { return x / (x - 1); } finally { counter--; } }
    }
    static String e(String s) {
        StringBuffer b = new StringBuffer();
        try { try { b.append(s.length()); } finally { b.append("-in"); try { b.append(s.charAt(0)); } finally { b.append("-nested"); } } }
        catch (Exception ex) { b.append("-caught"); }
        finally { b.append("-out"); }
        return b.toString();
    }
    static long f(long v, double d) {
        long r = v;
        try { r += (long) d; if (r > 10) return r * 2; } finally { r = -r; }
        return r;
    }
    public static void main(String[] args) {
        StringBuffer out = new StringBuffer();
        for (int i = 0; i < 6; i++) out.append(a(i)).append(' ').append(b(i)).append(' ').append(c(i)).append(' ');
        out.append(d(new Object(), 3)).append(' ');
        try { d(new Object(), 1); } catch (ArithmeticException ex) { out.append("div "); }
        out.append(e("xyz")).append(' ').append(e("")).append(' ').append(e(null)).append(' ');
        out.append(f(3, 4.5)).append(' ').append(f(30, 1.0)).append(' ').append(counter);
        System.out.println(out);
    }
}
