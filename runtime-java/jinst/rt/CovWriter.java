package jinst.rt;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UTFDataFormatException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.charset.Charset;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.zip.CRC32;

/**
 * The coverage data file (.cov, docs/coverage-format.md) written from Java,
 * byte for byte what report/covdata_io.c writes for the same data, so code
 * instrumented ahead of time writes its coverage at shutdown without the
 * agent. The same canonical form (sessions by start, dump, name; classes by
 * name bytes, then identity as unsigned) and the same merge rules when a
 * record of one name and identity is added twice (two loaders of the same
 * class bytes): booleans ORed, counts added saturating at 2^64 - 1 (counts
 * are unsigned 64-bit values in a long), booleans with counts give counts,
 * each true boolean adding 1; a different probe count under the same
 * identity is refused. Names are written as DataOutputStream.writeUTF
 * writes them: modified UTF-8 after a two-byte length, as the format says.
 *
 * One class file, no nested classes, as the rest of the runtime (the agent
 * embeds the runtime's classes by name): sessions and records are kept as
 * byte keys whose unsigned bytewise order is the format's order, a
 * session's (start and dump with their sign bit flipped, then the name), a
 * record's (the name, a 0 byte, which modified UTF-8 never holds and which
 * sorts a name before its extensions as C's strcmp does, then the
 * identity), and the class is its own Comparator of keys. As strings (one
 * char per byte, ISO-8859-1) they key a set and a map.
 *
 * Not thread-safe: the caller collects the data, then writes once.
 */
final class CovWriter implements Comparator<byte[]> {
	static final int VERSION = 1;
	static final int MAX_PROBES = 1 << 24;
	static final long MAX_SIZE = 1L << 30;
	private static final byte[] MAGIC = {(byte) 0x89, 'J', 'C', 'O', 'V', '\r', '\n', 0x1a};
	private static final Charset BYTES = Charset.forName("ISO-8859-1");

	private final HashSet<String> sessions = new HashSet<String>();
	/* Record key -> boolean[] or long[]. */
	private final HashMap<String, Object> records = new HashMap<String, Object>();

	/** Adds a session (times in ms since the epoch); an equal one is not added twice. */
	void session(String name, long startMs, long dumpMs) {
		byte[] n = utf(name);
		byte[] key = new byte[16 + n.length];
		put(key, 0, startMs ^ Long.MIN_VALUE);
		put(key, 8, dumpMs ^ Long.MIN_VALUE);
		System.arraycopy(n, 0, key, 16, n.length);
		sessions.add(new String(key, BYTES));
	}

	/** Adds a class record of booleans (copied). */
	void booleans(long identity, String name, boolean[] probes) {
		String key = key(identity, name, probes.length);
		Object old = records.get(key);
		if (old == null) {
			records.put(key, probes.clone());
		} else if (old instanceof boolean[]) {
			boolean[] b = (boolean[]) old;
			for (int i = 0; i < probes.length; i++)
				b[i] |= probes[i];
		} else {
			long[] c = (long[]) old;
			for (int i = 0; i < probes.length; i++)
				c[i] = add(c[i], probes[i] ? 1 : 0);
		}
	}

	/** Adds a class record of hit counts (copied; unsigned 64-bit values). */
	void counts(long identity, String name, long[] counts) {
		String key = key(identity, name, counts.length);
		Object old = records.get(key);
		long[] c;
		if (old instanceof long[]) {
			c = (long[]) old;
		} else { /* new, or booleans that become counts */
			c = new long[counts.length];
			for (int i = 0; old != null && i < c.length; i++)
				c[i] = ((boolean[]) old)[i] ? 1 : 0;
			records.put(key, c);
		}
		for (int i = 0; i < counts.length; i++)
			c[i] = add(c[i], counts[i]);
	}

	/* The record's key; refuses what the format cannot hold. */
	private String key(long identity, String name, int probes) {
		byte[] n = utf(name);
		if (n.length == 0)
			throw new IllegalArgumentException("a class record without a name");
		if (probes > MAX_PROBES)
			throw new IllegalArgumentException(name + ": " + probes + " probes, more than the format's " + MAX_PROBES);
		byte[] key = Arrays.copyOf(n, n.length + 9);
		put(key, n.length + 1, identity);
		String k = new String(key, BYTES);
		Object old = records.get(k);
		int had = old instanceof boolean[] ? ((boolean[]) old).length : old != null ? ((long[]) old).length : probes;
		if (had != probes)
			throw new IllegalArgumentException(name + ": identity " + Long.toHexString(identity) + " recorded with " +
			                                   had + " probes and with " + probes);
		return k;
	}

	/* Unsigned, saturating at 2^64 - 1 (-1L). */
	private static long add(long a, long b) {
		long s = a + b;
		return Long.compareUnsigned(s, a) < 0 ? -1L : s;
	}

	private static void put(byte[] b, int at, long v) {
		for (int i = 0; i < 8; i++)
			b[at + i] = (byte) (v >>> (56 - 8 * i));
	}

	private static long get(byte[] b, int at) {
		long v = 0;
		for (int i = 0; i < 8; i++)
			v = v << 8 | (b[at + i] & 0xff);
		return v;
	}

	/* Modified UTF-8, without the length writeUTF puts first. */
	private static byte[] utf(String s) {
		ByteArrayOutputStream b = new ByteArrayOutputStream(s.length() + 2);
		try {
			new DataOutputStream(b).writeUTF(s);
		} catch (UTFDataFormatException e) {
			throw new IllegalArgumentException("a name longer than 65535 bytes: " + s.substring(0, 64) + "...");
		} catch (IOException e) {
			throw new IllegalStateException(e);
		}
		byte[] all = b.toByteArray();
		return Arrays.copyOfRange(all, 2, all.length);
	}

	/** Keys bytewise, as unsigned bytes, a prefix first. */
	@Override
	public int compare(byte[] a, byte[] b) {
		int n = Math.min(a.length, b.length);
		for (int i = 0; i < n; i++)
			if (a[i] != b[i])
				return (a[i] & 0xff) - (b[i] & 0xff);
		return a.length - b.length;
	}

	private byte[][] sorted(Iterable<String> keys, int count) {
		byte[][] k = new byte[count][];
		int i = 0;
		for (String s : keys)
			k[i++] = s.getBytes(BYTES);
		Arrays.sort(k, this);
		return k;
	}

	/** The file's bytes. */
	byte[] toBytes() throws IOException {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		DataOutputStream out = new DataOutputStream(bytes);
		out.write(MAGIC);
		out.writeShort(VERSION);
		out.writeInt(sessions.size());
		for (byte[] k : sorted(sessions, sessions.size())) {
			out.writeShort(k.length - 16);
			out.write(k, 16, k.length - 16);
			out.writeLong(get(k, 0) ^ Long.MIN_VALUE);
			out.writeLong(get(k, 8) ^ Long.MIN_VALUE);
		}
		out.writeInt(records.size());
		for (byte[] k : sorted(records.keySet(), records.size())) {
			Object probes = records.get(new String(k, BYTES));
			boolean counts = probes instanceof long[];
			out.writeLong(get(k, k.length - 8));
			out.writeShort(k.length - 9);
			out.write(k, 0, k.length - 9);
			out.writeInt(counts ? ((long[]) probes).length : ((boolean[]) probes).length);
			out.writeByte(counts ? 1 : 0);
			if (counts)
				writeCounts(out, (long[]) probes);
			else
				writeBits(out, (boolean[]) probes);
			if (out.size() > MAX_SIZE)
				throw new IOException("the coverage data would pass the format's size limit");
		}
		CRC32 crc = new CRC32();
		crc.update(bytes.toByteArray());
		out.writeInt((int) crc.getValue());
		out.flush();
		return bytes.toByteArray();
	}

	/* Eight probes a byte, probe i in bit i % 8 of byte i / 8. */
	private static void writeBits(DataOutputStream out, boolean[] probes) throws IOException {
		byte[] bits = new byte[(probes.length + 7) / 8];
		for (int i = 0; i < probes.length; i++)
			if (probes[i])
				bits[i >> 3] |= (byte) (1 << (i & 7));
		out.write(bits);
	}

	/* Unsigned LEB128, minimal. */
	private static void writeCounts(DataOutputStream out, long[] counts) throws IOException {
		for (long v : counts) {
			while ((v & ~0x7FL) != 0) {
				out.writeByte((int) (v & 0x7F) | 0x80);
				v >>>= 7;
			}
			out.writeByte((int) v);
		}
	}

	/**
	 * Writes the file at path: to a temporary file beside it, flushed to
	 * disk, then renamed over it, so path holds its old contents or the
	 * whole new file.
	 */
	void write(String path) throws IOException {
		byte[] data = toBytes();
		File target = new File(path).getAbsoluteFile();
		File tmp = File.createTempFile("." + target.getName() + ".", ".tmp", target.getParentFile());
		boolean done = false;
		try {
			FileOutputStream out = new FileOutputStream(tmp);
			try {
				out.write(data);
				out.getFD().sync();
			} finally {
				out.close();
			}
			Files.move(tmp.toPath(), target.toPath(), StandardCopyOption.ATOMIC_MOVE);
			done = true;
		} finally {
			if (!done)
				tmp.delete();
		}
	}
}
