/*
 * The JavaScript that RhinoWorkload runs: run(rounds) returns one line per
 * round. Each round exercises a part of the engine: objects and prototype
 * chains, closures, regular expressions (a tokenizer and a parser of
 * arithmetic, word counts, replacement with a function), JSON both ways,
 * arrays and strings, exceptions. Deterministic: no Math.random, no Date,
 * and property order is insertion order.
 */

/* Objects: a small class hierarchy through prototypes. */
function Shape(name) { this.name = name; }
Shape.prototype.area = function () { return 0; };
Shape.prototype.describe = function () {
    return this.name + ':' + this.area().toFixed(2);
};
function Rect(w, h) { Shape.call(this, 'rect'); this.w = w; this.h = h; }
Rect.prototype = Object.create(Shape.prototype);
Rect.prototype.constructor = Rect;
Rect.prototype.area = function () { return this.w * this.h; };
function Circle(r) { Shape.call(this, 'circle'); this.r = r; }
Circle.prototype = Object.create(Shape.prototype);
Circle.prototype.constructor = Circle;
Circle.prototype.area = function () { return Math.PI * this.r * this.r; };
function Square(s) { Rect.call(this, s, s); this.name = 'square'; }
Square.prototype = Object.create(Rect.prototype);
Square.prototype.constructor = Square;

function shapes(seed) {
    var list = [];
    for (var i = 0; i < 40; i++) {
        var k = (seed + i * 7) % 3;
        if (k === 0) list.push(new Rect(1 + i % 5, 2 + i % 3));
        else if (k === 1) list.push(new Circle(1 + i % 4));
        else list.push(new Square(1 + i % 6));
    }
    list.sort(function (a, b) { return a.area() - b.area() || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });
    var total = 0, byKind = {};
    list.forEach(function (s) {
        total += s.area();
        byKind[s.name] = (byKind[s.name] || 0) + 1;
        if (!(s instanceof Shape)) throw new Error('not a shape');
    });
    var kinds = Object.keys(byKind).map(function (k) { return k + '=' + byKind[k]; }).join(',');
    return list[0].describe() + ' ' + list[list.length - 1].describe() + ' ' + total.toFixed(3) + ' ' + kinds;
}

/* Closures: counters, memoization, composition, currying. */
function makeCounter(start, step) {
    var n = start;
    return { next: function () { n += step; return n; }, get: function () { return n; } };
}
function memoize(f) {
    var cache = {};
    return function (x) {
        if (Object.prototype.hasOwnProperty.call(cache, x)) return cache[x];
        return (cache[x] = f(x));
    };
}
function compose() {
    var fs = Array.prototype.slice.call(arguments);
    return function (x) { return fs.reduceRight(function (acc, f) { return f(acc); }, x); };
}
function curry(f) {
    return function c() {
        var args = Array.prototype.slice.call(arguments);
        if (args.length >= f.length) return f.apply(null, args);
        return function () { return c.apply(null, args.concat(Array.prototype.slice.call(arguments))); };
    };
}
var fib = memoize(function (n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); });

function closures(seed) {
    var counters = [];
    for (var i = 0; i < 10; i++) counters.push(makeCounter(i, seed % 7 + i));
    var sum = 0;
    for (var round = 0; round < 30; round++) {
        counters.forEach(function (c, j) { if ((round + j) % 3) sum += c.next(); });
    }
    var add3 = curry(function (a, b, c) { return a + b + c; });
    var f = compose(function (x) { return x * 2; }, function (x) { return x + 3; }, add3(1)(2));
    var adders = [];
    for (var k = 0; k < 5; k++) adders.push((function (k) { return function (x) { return x + k; }; })(k));
    var z = adders.reduce(function (acc, g) { return g(acc); }, seed);
    return sum + ' ' + f(seed) + ' ' + fib(40 + seed % 20) + ' ' + z;
}

/* Regular expressions: a tokenizer and a recursive-descent evaluator. */
var TOKEN = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_]\w*)|(\*\*|[-+*\/%()^,]))/g;
function tokenize(src) {
    var out = [], m;
    TOKEN.lastIndex = 0;
    while (TOKEN.lastIndex < src.length && (m = TOKEN.exec(src)) !== null) {
        if (m[1] !== undefined) out.push({ t: 'num', v: parseFloat(m[1]) });
        else if (m[2] !== undefined) out.push({ t: 'id', v: m[2] });
        else out.push({ t: 'op', v: m[3] });
    }
    return out;
}
function evaluate(src, env) {
    var toks = tokenize(src), pos = 0;
    function peek() { return toks[pos]; }
    function take(v) {
        var t = toks[pos];
        if (!t || (v !== undefined && t.v !== v)) throw new SyntaxError('expected ' + v + ' at ' + pos);
        pos++;
        return t;
    }
    function primary() {
        var t = take();
        if (t.t === 'num') return t.v;
        if (t.v === '(') { var e = expr(); take(')'); return e; }
        if (t.v === '-') return -primary();
        if (t.t === 'id') {
            if (peek() && peek().v === '(') {
                take('(');
                var args = [expr()];
                while (peek() && peek().v === ',') { take(','); args.push(expr()); }
                take(')');
                return Math[t.v].apply(Math, args);
            }
            if (!(t.v in env)) throw new ReferenceError('unbound ' + t.v);
            return env[t.v];
        }
        throw new SyntaxError('unexpected ' + t.v);
    }
    function power() {
        var b = primary();
        while (peek() && (peek().v === '^' || peek().v === '**')) { take(); b = Math.pow(b, primary()); }
        return b;
    }
    function term() {
        var a = power();
        while (peek() && /^[*\/%]$/.test(peek().v)) {
            var op = take().v, b = power();
            a = op === '*' ? a * b : op === '/' ? a / b : a % b;
        }
        return a;
    }
    function expr() {
        var a = term();
        while (peek() && (peek().v === '+' || peek().v === '-')) {
            var op = take().v, b = term();
            a = op === '+' ? a + b : a - b;
        }
        return a;
    }
    var v = expr();
    if (pos !== toks.length) throw new SyntaxError('trailing input at ' + pos);
    return v;
}

var TEXT = 'The quick brown fox jumps over the lazy dog. A dog, a fox; the end? ' +
    'Contact: alice@example.org, bob.smith@mail.example.com, not-an-address@, carol@host.net. ' +
    'Version 1.7.14 was released on 2022-01-06; version 1.7.13 on 2020-09-02.';

function regexps(seed) {
    var env = { x: seed % 10, y: 3, z: 0.5 };
    var exprs = ['1 + 2 * 3', '(x + y) * (x - y) / 2', 'max(x, y, 7) ^ 2 - min(3, z)',
        '2 ** 10 % 7 + -x', 'sqrt(16) + abs(-x) * floor(z + 2.7)', '((1))+((2)*(3))'];
    var results = exprs.map(function (e) { return evaluate(e, env); });
    var errors = 0;
    ['1 +', '(2', 'q * 2', '3 3'].forEach(function (bad) {
        try { evaluate(bad, env); } catch (e) { if (e instanceof SyntaxError || e instanceof ReferenceError) errors++; }
    });
    var words = {};
    TEXT.toLowerCase().replace(/[a-z]+/g, function (w) { words[w] = (words[w] || 0) + 1; return w; });
    var top = Object.keys(words).sort(function (a, b) { return words[b] - words[a] || (a < b ? -1 : 1); }).slice(0, 4);
    var emails = TEXT.match(/\b[\w.]+@[\w-]+(?:\.[\w-]+)+\b/g) || [];
    var dates = [], m, re = /(\d{4})-(\d{2})-(\d{2})/g;
    while ((m = re.exec(TEXT)) !== null) dates.push(m[3] + '/' + m[2] + '/' + m[1]);
    var swapped = 'first last, one two'.replace(/(\w+) (\w+)/g, '$2 $1');
    var parts = 'a1b22c333d'.split(/\d+/);
    var sticky = /^(?:ab)+$/i.test('AbaBab') && !/^x*$/.test('xyx');
    return results.map(function (r) { return r.toFixed(4); }).join(',') + ' ' + errors + ' ' +
        top.join('|') + ' ' + emails.length + ' ' + dates.join(';') + ' ' + swapped + ' ' + parts.join('-') + ' ' + sticky;
}

/* JSON: nested data out and back, with a replacer and a reviver. */
function json(seed) {
    var doc = { id: seed, tags: ['a', 'b', 'c'], nested: { depth: 1, items: [] }, flag: seed % 2 === 0, nothing: null };
    for (var i = 0; i < 25; i++) {
        doc.nested.items.push({ k: 'item' + i, v: (i * seed) % 17, sub: { even: i % 2 === 0, list: [i, i * i, 'x' + i] } });
    }
    var text = JSON.stringify(doc, function (k, v) { return k === 'nothing' ? undefined : v; });
    var pretty = JSON.stringify(doc.nested.items.slice(0, 3), null, 2);
    var back = JSON.parse(text, function (k, v) { return typeof v === 'number' ? v * 2 : v; });
    var sum = back.nested.items.reduce(function (a, it) { return a + it.v + it.sub.list[1]; }, 0);
    var bad = 0;
    ['{"a":', '[1,2,]', "{'a':1}", 'tru'].forEach(function (s) {
        try { JSON.parse(s); } catch (e) { bad++; }
    });
    return text.length + ' ' + pretty.split('\n').length + ' ' + sum + ' ' + ('nothing' in back) + ' ' + bad;
}

/* Arrays and strings: sieve, matrices, formatting. */
function arrays(seed) {
    var n = 2000 + seed % 100, sieve = [], primes = [];
    for (var i = 2; i <= n; i++) {
        if (!sieve[i]) { primes.push(i); for (var j = i * i; j <= n; j += i) sieve[j] = true; }
    }
    var a = [], b = [];
    for (var r = 0; r < 12; r++) {
        a.push([]); b.push([]);
        for (var c = 0; c < 12; c++) { a[r].push((r + c + seed) % 5); b[r].push((r * c) % 7 - 3); }
    }
    var prod = a.map(function (row) {
        return b[0].map(function (_, c) { return row.reduce(function (s, x, k) { return s + x * b[k][c]; }, 0); });
    });
    var trace = prod.reduce(function (s, row, k) { return s + row[k]; }, 0);
    var words = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do'.split(' ');
    var caps = words.filter(function (w) { return w.length > 3; })
        .map(function (w) { return w.charAt(0).toUpperCase() + w.substring(1); })
        .sort().reverse().join('');
    var padded = ('00000' + (seed * 37)).slice(-5) + (seed / 7).toFixed(3) + (255).toString(16) + parseInt('ff', 16);
    return primes.length + ' ' + primes[primes.length - 1] + ' ' + trace + ' ' + caps.length + ' ' + padded +
        ' ' + [3, 1, 2].concat([5, 4]).indexOf(5) + ' ' + words.lastIndexOf('sed');
}

/* Exceptions: custom errors through finally blocks. */
function ValidationError(msg, code) { this.message = msg; this.code = code; }
ValidationError.prototype = Object.create(Error.prototype);
ValidationError.prototype.name = 'ValidationError';
function validate(v) {
    if (typeof v !== 'number') throw new ValidationError('not a number: ' + v, 1);
    if (v < 0) throw new ValidationError('negative: ' + v, 2);
    if (v !== Math.floor(v)) throw new RangeError('fraction: ' + v);
    return v;
}
function exceptions(seed) {
    var inputs = [seed, -seed - 1, 'x', 1.5, null, 42, undefined, 7];
    var codes = [], finals = 0, ok = 0;
    inputs.forEach(function (v) {
        try {
            try { ok += validate(v); } finally { finals++; }
        } catch (e) {
            codes.push(e instanceof ValidationError ? e.code : e.name);
        }
    });
    return ok + ' ' + finals + ' ' + codes.join(',');
}

function run(rounds) {
    var out = [];
    for (var i = 0; i < rounds; i++) {
        out.push([shapes(i), closures(i), regexps(i), json(i), arrays(i), exceptions(i)].join(' / '));
    }
    return out.join('\n');
}
