package jinst.rt;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UTFDataFormatException;
import java.nio.channels.FileLock;
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
 * It also reads the format, to append: merge(bytes) takes a whole file's
 * data in or refuses it whole (a newer version, damage, truncation, a
 * non-canonical form: IOException, nothing taken), and append(path) reads,
 * merges and writes under the lock report/covdata_io.c takes (an fcntl
 * lock of PATH.lock, which FileChannel.lock is on Linux), so the agent,
 * this runtime and parallel test processes can append to one file.
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
		add(key(identity, name, probes.length), probes.clone());
	}

	/** Adds a class record of hit counts (copied; unsigned 64-bit values). */
	void counts(long identity, String name, long[] counts) {
		add(key(identity, name, counts.length), counts.clone());
	}

	/* Takes probes (boolean[] or long[], owned from now on) for the record
	 * of key, whose probe count key() has checked, by the merge rules. */
	private void add(String key, Object probes) {
		Object old = records.get(key);
		if (old == null) {
			records.put(key, probes);
		} else if (old instanceof boolean[] && probes instanceof boolean[]) {
			boolean[] b = (boolean[]) old, p = (boolean[]) probes;
			for (int i = 0; i < p.length; i++)
				b[i] |= p[i];
		} else {
			long[] c = counts(old), p = counts(probes);
			for (int i = 0; i < p.length; i++)
				c[i] = add(c[i], p[i]);
			records.put(key, c);
		}
	}

	/* Counts as they are, or booleans as counts of 0 and 1. */
	private static long[] counts(Object probes) {
		if (probes instanceof long[])
			return (long[]) probes;
		boolean[] b = (boolean[]) probes;
		long[] c = new long[b.length];
		for (int i = 0; i < b.length; i++)
			c[i] = b[i] ? 1 : 0;
		return c;
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
		int had = probeCount(records.get(k), probes);
		if (had != probes)
			throw new IllegalArgumentException(name + ": identity " + Long.toHexString(identity) + " recorded with " +
			                                   had + " probes and with " + probes);
		return k;
	}

	private static int probeCount(Object probes, int otherwise) {
		return probes instanceof boolean[] ? ((boolean[]) probes).length
		       : probes != null ? ((long[]) probes).length : otherwise;
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

	/* ---- reading, to append ------------------------------------------- */

	/**
	 * Takes in the data of a whole file (sessions added, records merged),
	 * or, when the file is not of this format version, is damaged or
	 * truncated, or holds a record whose probe count differs from this
	 * writer's record of the same class and identity, throws and takes
	 * nothing.
	 */
	void merge(byte[] file) throws IOException {
		CovWriter read = new CovWriter();
		read.parse(file);
		for (String k : read.records.keySet()) {
			Object mine = records.get(k), theirs = read.records.get(k);
			if (mine != null && probeCount(mine, 0) != probeCount(theirs, 0))
				throw new IOException("class " + new String(k.getBytes(BYTES), 0, k.length() - 9, "UTF-8") +
				                      " identity " + Long.toHexString(get(k.getBytes(BYTES), k.length() - 8)) +
				                      " recorded with " + probeCount(mine, 0) + " and " + probeCount(theirs, 0) +
				                      " probes");
		}
		sessions.addAll(read.sessions);
		for (String k : read.records.keySet())
			add(k, read.records.get(k));
	}

	/* The whole file into this (empty) writer, by the format's rules. */
	private void parse(byte[] file) throws IOException {
		int n = file.length;
		if (n < MAGIC.length || !Arrays.equals(Arrays.copyOf(file, MAGIC.length), MAGIC))
			throw new IOException("not a jinst coverage data file (no magic)");
		int version = n < 10 ? -1 : (file[8] & 0xff) << 8 | (file[9] & 0xff);
		if (version > VERSION)
			throw new IOException("format version " + version + ", newer than this runtime reads (" + VERSION + ")");
		if (version == 0)
			throw new IOException("format version 0");
		if (n < 22)
			throw new IOException("truncated");
		CRC32 crc = new CRC32();
		crc.update(file, 0, n - 4);
		if ((int) crc.getValue() != (int) (get(file, n - 8) & 0xffffffffL))
			throw new IOException("CRC mismatch: the file is damaged");
		ByteArrayInputStream bytes = new ByteArrayInputStream(file, 10, n - 14);
		DataInputStream in = new DataInputStream(bytes);
		try {
			byte[] last = null;
			for (int i = 0, count = count(in, bytes, 18); i < count; i++) {
				byte[] name = name(in);
				byte[] key = new byte[16 + name.length];
				put(key, 0, in.readLong() ^ Long.MIN_VALUE);
				put(key, 8, in.readLong() ^ Long.MIN_VALUE);
				System.arraycopy(name, 0, key, 16, name.length);
				last = next(key, last, "sessions");
				sessions.add(new String(key, BYTES));
			}
			last = null;
			for (int i = 0, count = count(in, bytes, 15); i < count; i++)
				last = readRecord(in, bytes, last);
		} catch (EOFException e) {
			throw new IOException("truncated");
		}
		if (bytes.available() != 0)
			throw new IOException(bytes.available() + " bytes after the last class");
	}

	private byte[] readRecord(DataInputStream in, ByteArrayInputStream bytes, byte[] last) throws IOException {
		long identity = in.readLong();
		byte[] name = name(in);
		int probes = in.readInt(), kind = in.readUnsignedByte();
		if (name.length == 0 || probes < 0 || probes > MAX_PROBES || kind > 1)
			throw new IOException("a class record with an empty name, too many probes or an unknown kind");
		if ((kind == 0 ? (probes + 7L) / 8 : probes) > bytes.available())
			throw new IOException(probes + " probes cannot fit in the bytes left");
		byte[] key = Arrays.copyOf(name, name.length + 9);
		put(key, name.length + 1, identity);
		records.put(new String(key, BYTES), kind == 0 ? readBits(in, probes) : readCounts(in, probes));
		return next(key, last, "classes");
	}

	/* A u4 count of elements of at least min bytes, checked against the bytes left. */
	private static int count(DataInputStream in, ByteArrayInputStream bytes, int min) throws IOException {
		long n = in.readInt() & 0xffffffffL;
		if (n > bytes.available() / min)
			throw new IOException(n + " elements cannot fit in the " + bytes.available() + " bytes left");
		return (int) n;
	}

	/* A name's modified UTF-8, which must be in the one form writeUTF writes. */
	private static byte[] name(DataInputStream in) throws IOException {
		byte[] b = new byte[in.readUnsignedShort()];
		in.readFully(b);
		byte[] prefixed = new byte[b.length + 2];
		prefixed[0] = (byte) (b.length >> 8);
		prefixed[1] = (byte) b.length;
		System.arraycopy(b, 0, prefixed, 2, b.length);
		String s;
		try {
			s = new DataInputStream(new ByteArrayInputStream(prefixed)).readUTF();
		} catch (UTFDataFormatException e) {
			throw new IOException("a name that is not modified UTF-8");
		}
		if (!Arrays.equals(utf(s), b))
			throw new IOException("a name that is not modified UTF-8");
		return b;
	}

	/* The canonical order: each key after the one before. */
	private byte[] next(byte[] key, byte[] last, String what) throws IOException {
		if (last != null && compare(last, key) >= 0)
			throw new IOException(what + " out of order or repeated");
		return key;
	}

	private static boolean[] readBits(DataInputStream in, int probes) throws IOException {
		byte[] bits = new byte[(probes + 7) / 8];
		in.readFully(bits);
		boolean[] b = new boolean[probes];
		for (int i = 0; i < probes; i++)
			b[i] = (bits[i >> 3] >> (i & 7) & 1) != 0;
		if (probes % 8 != 0 && (bits[bits.length - 1] & 0xff) >> (probes % 8) != 0)
			throw new IOException("padding bits after the last probe are not 0");
		return b;
	}

	/* Minimal unsigned LEB128 of at most 64 bits. */
	private static long[] readCounts(DataInputStream in, int probes) throws IOException {
		long[] c = new long[probes];
		for (int i = 0; i < probes; i++) {
			long v = 0;
			for (int shift = 0;; shift += 7) {
				int b = in.readUnsignedByte();
				if (shift == 63 && b > 1)
					throw new IOException("a count longer than 64 bits");
				v |= (long) (b & 0x7f) << shift;
				if ((b & 0x80) == 0) {
					if (b == 0 && shift > 0)
						throw new IOException("a count encoded with padding (not minimal)");
					break;
				}
			}
			c[i] = v;
		}
		return c;
	}

	/**
	 * Appends this data to the file at path: under an exclusive lock of
	 * PATH.lock (kept beside it), reads the file if there is one, merges
	 * this data with it and writes the whole back as write() does. A file
	 * that cannot be read or merged is left as it is, and the IOException
	 * says why. This writer holds the file's data afterwards.
	 */
	void append(String path) throws IOException {
		append(path, new byte[1][]);
	}

	/**
	 * As append(path), with base[0] the file's bytes to merge: when null,
	 * the file as it is under the lock, kept there for the next call. So a
	 * program that writes its data more than once (Control.dump, then at
	 * exit) merges each time into the file as it first found it, and never
	 * adds its hits twice.
	 */
	void append(String path, byte[][] base) throws IOException {
		File target = new File(path).getAbsoluteFile();
		RandomAccessFile lockFile = new RandomAccessFile(target.getPath() + ".lock", "rw");
		try {
			FileLock lock = lockFile.getChannel().lock();
			try {
				if (base[0] == null)
					base[0] = target.exists() ? Files.readAllBytes(target.toPath()) : new byte[0];
				if (base[0].length > 0)
					merge(base[0]);
				write(path);
			} finally {
				lock.release();
			}
		} finally {
			lockFile.close();
		}
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
