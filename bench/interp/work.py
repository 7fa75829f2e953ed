# An interpreter's workload for bench/trace, run by Jython (Debian's jython
# package): deep recursion, many small methods, megamorphic calls through
# classes, dictionaries and strings. Deterministic: prints one checksum.
import sys


class Shape(object):
    def __init__(self, n):
        self.n = n

    def area(self):
        return 0


class Square(Shape):
    def area(self):
        return self.n * self.n


class Tri(Shape):
    def area(self):
        return self.n * (self.n + 1) // 2


class Circle(Shape):
    def area(self):
        return (314 * self.n * self.n) // 100


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))


def words(i):
    text = " ".join("w%d" % ((i * k) % 97) for k in range(60))
    freq = {}
    for w in text.split():
        freq[w] = freq.get(w, 0) + 1
    return sum(v * len(k) for k, v in sorted(freq.items()))


def shapes(i):
    kinds = (Square, Tri, Circle, Shape)
    return sum(kinds[k % 4](k + i).area() for k in range(200))


def main(scale):
    sys.setrecursionlimit(10000)
    total = 0
    for i in range(scale):
        total += fib(18) + ackermann(2, 40 + i % 5) + words(i) + shapes(i)
    print("jython work %d: %d" % (scale, total))


main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
