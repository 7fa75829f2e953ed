package profile;

import java.util.Random;

/** A small program with a clear hot spot, for the ranked profile and the flame graph. */
public class Profile {
	/* Trial division: the hot spot, called once per number. */
	static boolean isPrime(int n) {
		if (n < 2)
			return false;
		for (int d = 2; (long) d * d <= n; d++)
			if (n % d == 0)
				return false;
		return true;
	}

	static int countPrimes(int from, int to) {
		int c = 0;
		for (int n = from; n < to; n++)
			if (isPrime(n))
				c++;
		return c;
	}

	/* A recursive merge sort: deep stacks in the flame graph. */
	static void mergeSort(int[] a, int[] tmp, int lo, int hi) {
		if (hi - lo < 2)
			return;
		int mid = (lo + hi) >>> 1;
		mergeSort(a, tmp, lo, mid);
		mergeSort(a, tmp, mid, hi);
		merge(a, tmp, lo, mid, hi);
	}

	static void merge(int[] a, int[] tmp, int lo, int mid, int hi) {
		int i = lo, j = mid, k = lo;
		while (i < mid && j < hi)
			tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
		while (i < mid)
			tmp[k++] = a[i++];
		while (j < hi)
			tmp[k++] = a[j++];
		System.arraycopy(tmp, lo, a, lo, hi - lo);
	}

	static long sortChecksum(int n) {
		int[] a = new Random(42).ints(n, 0, 1000000).toArray();
		mergeSort(a, new int[n], 0, n);
		long s = 0;
		for (int i = 0; i < n; i++)
			s = s * 31 + a[i];
		return s;
	}

	public static void main(String[] args) {
		System.out.println("primes in [10^9, 10^9 + 100000): " + countPrimes(1000000000, 1000100000));
		System.out.println("sorted 200000 numbers, checksum " + sortChecksum(200000));
	}
}
