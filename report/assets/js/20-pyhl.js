// SPDX-License-Identifier: MIT
// Python syntax highlighting, done lazily for the rows of the open file that are drawn.
// pyStates() walks a file once to learn which lines start inside a multi-line string; pyLine()
// then tokenizes one line from that state into [start, end, class] spans (UTF-16 offsets).
// Classes: kw keyword, con constant, bi builtin, sf self/cls, fn defined name, str string,
// fx f-string field braces, com comment, num number, dec decorator.

var PY_KW = new Set(("and as assert async await break class continue def del elif else except " +
		     "finally for from global if import in is lambda nonlocal not or pass raise " +
		     "return try while with yield").split(" "));
var PY_SOFT = new Set(["match", "case", "type"]);
var PY_CONST = new Set(["True", "False", "None", "Ellipsis", "NotImplemented", "__debug__"]);
var PY_BUILTIN = new Set(("abs all any bool bytearray bytes callable chr dict dir divmod " +
			  "enumerate filter float format frozenset getattr hasattr hash hex id " +
			  "input int isinstance issubclass iter len list map max min next object oct " +
			  "open ord pow print property range repr reversed round set setattr slice " +
			  "sorted staticmethod classmethod str sum super tuple type vars zip " +
			  "Exception ValueError TypeError KeyError IndexError RuntimeError " +
			  "StopIteration OSError NotImplementedError AttributeError").split(" "));
var PY_PREFIX = new Set(["r", "u", "b", "f", "t", "br", "rb", "fr", "rf", "tr", "rt"]);
var PY_NUM = /(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)/y;

function pyIdStart(c) {
	return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c >= 128;
}

function pyIdChar(c) {
	return pyIdStart(c) || (c >= 48 && c <= 57);
}

function pyDigit(c) {
	return c >= 48 && c <= 57;
}

// State at the start of every line: 0 (code) or the open string {q, raw, f}.
function pyStates(lines) {
	var st = 0, out = new Array(lines.length), quoteish = /["'\\]/;
	for (var i = 0; i < lines.length; i++) {
		out[i] = st;
		// only quotes and backslashes change the state; most lines have neither
		if (st || quoteish.test(lines[i]))
			st = pyTokenize(lines[i], st, null, 0, lines[i].length);
	}
	return out;
}

function pyLine(s, st) {
	var spans = [];
	pyTokenize(s, st, spans, 0, s.length);
	return spans;
}

// Tokenizes s[from..to) starting in state st; pushes spans to out (when not null) and returns
// the state at `to`.
function pyTokenize(s, st, out, from, to) {
	var i = from, first = true, afterDef = false;
	if (st) {
		i = pyString(s, i, to, st, out, i);
		if (i < 0)
			return st.q.length === 3 || st.cont ? st : 0;
		st = 0;
	}
	while (i < to) {
		var c = s.charCodeAt(i);
		if (c === 32 || c === 9 || c === 12) {
			i++;
			continue;
		}
		if (c === 35) { // comment
			if (out)
				out.push([i, to, "com"]);
			return 0;
		}
		if (c === 34 || c === 39) {
			var r = pyOpenString(s, i, i, to, "", out);
			if (r.st)
				return r.st;
			i = r.end;
			first = afterDef = false;
			continue;
		}
		if (pyIdStart(c)) {
			var j = i + 1;
			while (j < to && pyIdChar(s.charCodeAt(j)))
				j++;
			var q = s.charCodeAt(j);
			if ((q === 34 || q === 39) && j - i <= 2 &&
			    PY_PREFIX.has(s.slice(i, j).toLowerCase())) {
				r = pyOpenString(s, i, j, to, s.slice(i, j).toLowerCase(), out);
				if (r.st)
					return r.st;
				i = r.end;
				first = afterDef = false;
				continue;
			}
			if (out) {
				var w = s.slice(i, j), cls = null;
				if (afterDef)
					cls = "fn";
				else if (PY_KW.has(w))
					cls = "kw";
				else if (PY_CONST.has(w))
					cls = "con";
				else if (w === "self" || w === "cls")
					cls = "sf";
				else if (first && PY_SOFT.has(w) && /^\s+[\w"'(\[{*-]/.test(s.slice(j, j + 3)) &&
					 !/^\s*[=.,)\]:]/.test(s.slice(j)))
					cls = "kw";
				else if (PY_BUILTIN.has(w) && s.charCodeAt(i - 1) !== 46)
					cls = "bi";
				if (cls)
					out.push([i, j, cls]);
				afterDef = w === "def" || w === "class";
			}
			first = false;
			i = j;
			continue;
		}
		if (pyDigit(c) || (c === 46 && pyDigit(s.charCodeAt(i + 1)))) {
			PY_NUM.lastIndex = i;
			var m = PY_NUM.exec(s);
			j = m ? Math.min(to, i + m[0].length) : i + 1;
			if (out)
				out.push([i, j, "num"]);
			i = j;
			first = afterDef = false;
			continue;
		}
		if (c === 64 && first) { // decorator: @name.attr
			j = i + 1;
			while (j < to && (s.charCodeAt(j) === 32 || s.charCodeAt(j) === 9))
				j++;
			while (j < to && (pyIdChar(s.charCodeAt(j)) || s.charCodeAt(j) === 46))
				j++;
			if (out)
				out.push([i, j, "dec"]);
			i = j;
			first = afterDef = false;
			continue;
		}
		first = afterDef = false;
		i++;
	}
	return 0;
}

// A string starting at `start` (its prefix) with the quote at q. Returns {end} or {st} when the
// string continues on the next line.
function pyOpenString(s, start, q, to, prefix, out) {
	var ch = s[q];
	var triple = s.charCodeAt(q + 1) === ch.charCodeAt(0) && s.charCodeAt(q + 2) === ch.charCodeAt(0);
	var st = {q: triple ? ch + ch + ch : ch, raw: prefix.indexOf("r") >= 0,
		  f: prefix.indexOf("f") >= 0 || prefix.indexOf("t") >= 0, cont: false};
	var end = pyString(s, q + st.q.length, to, st, out, start);
	if (end >= 0)
		return {end: end};
	if (triple)
		return {st: st};
	// A one-line string continues only after a trailing backslash.
	if (s.charCodeAt(to - 1) === 92)
		return {st: {q: st.q, raw: st.raw, f: st.f, cont: true}};
	return {end: to};
}

// Scans string content from i; spans start at spanStart. Returns the index after the closing
// quote, or -1 when the line ends first.
function pyString(s, i, to, st, out, spanStart) {
	var q0 = st.q.charCodeAt(0), triple = st.q.length === 3;
	while (i < to) {
		var c = s.charCodeAt(i);
		if (c === 92) {
			i += 2;
			continue;
		}
		if (c === q0 && (!triple || (s.charCodeAt(i + 1) === q0 && s.charCodeAt(i + 2) === q0))) {
			i += st.q.length;
			if (out)
				out.push([spanStart, i, "str"]);
			return i;
		}
		if (st.f && c === 123) {
			if (s.charCodeAt(i + 1) === 123) {
				i += 2;
				continue;
			}
			var close = pyFieldEnd(s, i + 1, to);
			if (close < 0)
				break;
			if (out) {
				out.push([spanStart, i, "str"]);
				out.push([i, i + 1, "fx"]);
				pyTokenize(s, 0, out, i + 1, close);
				out.push([close, close + 1, "fx"]);
			}
			i = spanStart = close + 1;
			continue;
		}
		i++;
	}
	if (out && spanStart < to)
		out.push([spanStart, to, "str"]);
	return -1;
}

// The "}" closing an f-string replacement field that starts at i, or -1 on this line.
function pyFieldEnd(s, i, to) {
	var depth = 0;
	while (i < to) {
		var c = s.charCodeAt(i);
		if (c === 34 || c === 39) {
			var k = s.indexOf(s[i], i + 1);
			if (k < 0 || k >= to)
				return -1;
			i = k + 1;
			continue;
		}
		if (c === 40 || c === 91 || c === 123)
			depth++;
		else if (c === 41 || c === 93)
			depth--;
		else if (c === 125) {
			if (depth === 0)
				return i;
			depth--;
		}
		i++;
	}
	return -1;
}
