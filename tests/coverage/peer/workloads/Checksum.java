/*
 * The result of a workload as one line, "checksum NAME HEX COUNT": FNV-1a
 * (64 bits) over the UTF-8 bytes of every value the workload produced, in
 * order, and how many there were. A run under a coverage agent must print
 * the line of the plain run: instrumentation changed nothing the program
 * computes.
 */
import java.nio.charset.StandardCharsets;

final class Checksum {
    private long hash = 0xcbf29ce484222325L;
    private long count;

    void add(String value) {
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xff;
            hash *= 0x100000001b3L;
        }
        hash ^= 0x1f; /* a separator, so ("ab", "c") differs from ("a", "bc") */
        hash *= 0x100000001b3L;
        count++;
    }

    void add(long value) {
        add(Long.toString(value));
    }

    void print(String name) {
        System.out.printf("checksum %s %016x %d%n", name, hash, count);
    }

    /* The scale argument of a workload, args[0] (peer.sh holds the defaults). */
    static int scale(String[] args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: WORKLOAD SCALE [FILE]");
        }
        return Integer.parseInt(args[0]);
    }
}
