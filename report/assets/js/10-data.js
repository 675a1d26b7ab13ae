// SPDX-License-Identifier: MIT
// The embedded report data (docs/report-data.md), parsed once, and the per-selection model the
// views read: rows of one process, or of all processes combined by (source, line).

var D = null; // the report-data document

// Per-line measurement columns. Combined rows add them up, except peaks, which take the maximum,
// and Avg / hit, which is recomputed from the rows that have hits.
var LINE_COLS = ["time_s", "total_s", "samples", "samples_total", "cpu_s", "wait_s", "gil_wait_s", "runq_s",
		 "python_s", "native_s", "kernel_s", "hits", "avg_hit_s", "mem_change", "peak_mem",
		 "gpu_s", "gpu_peak_mem", "driver_s", "gpu_native_s", "gpu_nccl_s"];
var PEAK_COLS = {peak_mem: true, gpu_peak_mem: true};
var FN_COLS = ["time_s", "total_s", "samples", "calls"];
var KEY_LINE = 16777216; // (src, line) -> src * KEY_LINE + line; lines stay below 2^24

function list(x) {
	return Array.isArray(x) ? x : [];
}

function loadData() {
	var node = document.getElementById("ls-data");
	if (!node)
		throw new Error("the report data block is missing");
	var doc = JSON.parse(node.textContent);
	if (!doc || typeof doc !== "object")
		throw new Error("the report data is not an object");
	if (doc.version !== 1)
		throw new Error("unsupported report data version " + doc.version);
	doc.run = doc.run || {};
	doc.run.capabilities = doc.run.capabilities || {};
	doc.run.lost = doc.run.lost || {};
	doc.run.notes = list(doc.run.notes);
	doc.processes = list(doc.processes);
	doc.sources = list(doc.sources);
	doc.lines = doc.lines || {};
	doc.functions = doc.functions || {};
	doc.edges = doc.edges || {};
	doc.symbols = list(doc.symbols);
	doc.children = list(doc.children);
	D = doc;
	initSources();
}

// ---- sources ------------------------------------------------------------------------------

var SRC_RANK = null; // position of each source when sorted by file name, then path
var srcTextCache = new Map();
var fnBySrc = null; // src -> [{def, end, name}] from every process, for callers of a line

function initSources() {
	var n = D.sources.length;
	var idx = [];
	for (var i = 0; i < n; i++) {
		var s = D.sources[i] || (D.sources[i] = {});
		s.name = s.name || baseName(s.path || "?");
		s.cells = Array.isArray(s.cells) && s.cells.length ? s.cells : null;
		idx.push(i);
	}
	idx.sort(function (a, b) {
		var x = D.sources[a], y = D.sources[b];
		return COLLATOR.compare(x.name, y.name) || COLLATOR.compare(x.path || "", y.path || "") ||
		       a - b;
	});
	SRC_RANK = new Int32Array(n);
	for (var r = 0; r < n; r++)
		SRC_RANK[idx[r]] = r;
}

function baseName(p) {
	var k = p.lastIndexOf("/");
	return k >= 0 ? p.slice(k + 1) : p;
}

// Lines of a source's text (split on "\n" only: U+2028 stays inside its line, as Python does).
function srcLines(s) {
	var c = srcTextCache.get(s);
	if (c)
		return c;
	var src = D.sources[s];
	var text = src && typeof src.text === "string" ? src.text : null;
	if (text === null)
		c = [];
	else {
		c = text.split("\n");
		if (c.length > 1 && c[c.length - 1] === "")
			c.pop();
		for (var i = 0; i < c.length; i++)
			if (c[i].charCodeAt(c[i].length - 1) === 13)
				c[i] = c[i].slice(0, -1);
	}
	srcTextCache.set(s, c);
	return c;
}

function srcLineCount(s) {
	var src = D.sources[s];
	if (src && isNum(src.nlines))
		return Math.max(src.nlines, srcLines(s).length);
	return srcLines(s).length;
}

function isBrowsable(s) {
	var src = D.sources[s];
	return !!src && (src.kind === "python" || src.kind === "notebook");
}

// The notebook cell holding text line `line` (1-based), or null.
function cellAt(s, line) {
	var cells = D.sources[s] && D.sources[s].cells;
	if (!cells)
		return null;
	var lo = 0, hi = cells.length - 1, best = -1;
	while (lo <= hi) {
		var mid = (lo + hi) >> 1;
		if (cells[mid].first <= line) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (best < 0)
		return null;
	var c = cells[best];
	return line < c.first + c.nlines ? c : null;
}

function cellName(c) {
	return c.label + (c.revision ? " (" + c.revision + ")" : "");
}

// The line number users see: notebook numbering restarts at 1 in every cell.
function shownLine(s, line) {
	var c = cellAt(s, line);
	return c ? line - c.first + 1 : line;
}

// "app.py:27", or "analysis.ipynb Cell 2 (revision 2 of 2):1" inside a notebook.
function locText(s, line) {
	var src = D.sources[s];
	if (!src)
		return "?";
	if (!isNum(line))
		return src.name;
	var c = cellAt(s, line);
	return c ? src.name + " " + cellName(c) + ":" + (line - c.first + 1) : src.name + ":" + line;
}

// Sort key for "position in the file": file order, then line.
function locKey(s, line) {
	return SRC_RANK[s] * KEY_LINE + (isNum(line) ? line : 0);
}

function functionsOf(s) {
	if (!fnBySrc) {
		fnBySrc = new Map();
		var F = D.functions, src = list(F.src), seen = new Set();
		for (var i = 0; i < src.length; i++) {
			var def = list(F.def_line)[i], end = list(F.end_line)[i];
			var k = src[i] * KEY_LINE + def;
			if (!isNum(def) || seen.has(k))
				continue;
			seen.add(k);
			if (!fnBySrc.has(src[i]))
				fnBySrc.set(src[i], []);
			fnBySrc.get(src[i]).push({def: def, end: isNum(end) ? end : def,
						  name: list(F.name)[i] || "?"});
		}
	}
	return fnBySrc.get(s) || [];
}

// The innermost function whose definition spans `line`, or null.
function functionAt(s, line) {
	var fs = functionsOf(s), best = null;
	for (var i = 0; i < fs.length; i++)
		if (fs[i].def <= line && line <= fs[i].end && (!best || fs[i].def > best.def))
			best = fs[i];
	return best;
}

function functionNamed(s, def) {
	var fs = functionsOf(s);
	for (var i = 0; i < fs.length; i++)
		if (fs[i].def === def)
			return fs[i];
	return null;
}

// ---- processes ----------------------------------------------------------------------------

// Whether the processes ran on more than one host (a merged profile): labels then name the host.
var MULTI_HOST = null;

function multiHost() {
	if (MULTI_HOST === null) {
		var hosts = new Set();
		D.processes.forEach(function (p) {
			hosts.add(p && typeof p.host === "string" ? p.host : "");
		});
		MULTI_HOST = hosts.size > 1;
	}
	return MULTI_HOST;
}

function hostOf(pr) {
	return multiHost() && pr && pr.host ? pr.host + " " : "";
}

function procLabel(p) {
	var pr = D.processes[p];
	if (!pr)
		return "?";
	return hostOf(pr) + (isNum(pr.pid) ? pr.pid + " " : "") +
	       (isNum(pr.rank) ? "[rank " + pr.rank + "] " : "") + (pr.argv || pr.comm || "");
}

function procShort(p) {
	var pr = D.processes[p];
	return pr ? hostOf(pr) + (isNum(pr.pid) ? "pid " + pr.pid : "process " + p) +
			       (isNum(pr.rank) ? " rank " + pr.rank : "") +
			       (pr.comm ? " " + pr.comm : "")
		  : "?";
}

// ---- groups: every process of one host or one rank (a merged profile) ------------------------

var GROUPS = null;

// Hosts when there is more than one; ranks when more than one is set. A process without a rank
// of its own (a data-loader worker, a compiler helper) goes with its nearest ancestor's.
function groups() {
	if (GROUPS)
		return GROUPS;
	var P = D.processes, byKey = new Map(), out = [];
	function add(kind, name, i) {
		var k = kind + "\u0000" + name, g = byKey.get(k);
		if (!g) {
			g = {kind: kind, name: name, procs: [], mask: new Uint8Array(P.length)};
			byKey.set(k, g);
			out.push(g);
		}
		g.procs.push(i);
		g.mask[i] = 1;
	}
	if (multiHost())
		P.forEach(function (pr, i) {
			add("host", pr && typeof pr.host === "string" ? pr.host : "", i);
		});
	var rank = inheritedRanks(), seen = [];
	rank.forEach(function (r) {
		if (isNum(r) && seen.indexOf(r) < 0)
			seen.push(r);
	});
	if (seen.length > 1) {
		seen.sort(function (a, b) {
			return a - b;
		});
		seen.forEach(function (r) {
			for (var i = 0; i < P.length; i++)
				if (rank[i] === r)
					add("rank", r, i);
		});
	}
	GROUPS = out;
	return out;
}

// Each process's rank, or its nearest ancestor's on the same host (null when none has one).
function inheritedRanks() {
	var P = D.processes, byPid = new Map(), out = [];
	function key(pr, pid) {
		return (pr && typeof pr.host === "string" ? pr.host : "") + "\u0000" + pid;
	}
	P.forEach(function (pr, i) {
		if (pr && isNum(pr.pid) && !byPid.has(key(pr, pr.pid)))
			byPid.set(key(pr, pr.pid), i);
	});
	for (var i = 0; i < P.length; i++) {
		var j = i, r = null;
		// bounded: a profile's ppids may form a loop
		for (var hops = 0; j !== undefined && P[j] && hops < 64; hops++) {
			if (isNum(P[j].rank)) {
				r = P[j].rank;
				break;
			}
			j = isNum(P[j].ppid) ? byPid.get(key(P[j], P[j].ppid)) : undefined;
		}
		out.push(r);
	}
	return out;
}

function groupLabel(g) {
	return g.kind === "host" ? "host " + (g.name || "?") : "rank " + g.name;
}

// ---- the selection model -----------------------------------------------------------------

// -1: all processes combined; p >= 0: D.processes[p]; -2 - g: every process of groups()[g].
var SEL = -1;
var selCache = new Map(), maskCache = new Map();

function validSel(key) {
	return key === -1 || (key >= 0 && key < D.processes.length) ||
	       (key <= -2 && -2 - key < groups().length);
}

// Which processes a selection holds: null for all, else a mask over D.processes.
function selMask(key) {
	if (key === -1 || !validSel(key))
		return null;
	var m = maskCache.get(key);
	if (!m) {
		if (key >= 0) {
			m = new Uint8Array(D.processes.length);
			m[key] = 1;
		} else {
			m = groups()[-2 - key].mask;
		}
		maskCache.set(key, m);
	}
	return m;
}

function selName(key) {
	if (key >= 0)
		return procShort(key);
	return key <= -2 && validSel(key) ? groupLabel(groups()[-2 - key]) : "all processes";
}

function sel() {
	var m = selCache.get(SEL);
	if (!m) {
		m = buildSel(SEL);
		selCache.set(SEL, m);
	}
	return m;
}

function inSel(proc) {
	var want = selMask(SEL);
	return !want || want[proc] === 1;
}

function buildSel(p) {
	var m = {proc: p};
	buildLines(m, p);
	buildEdges(m, p);
	buildContext(m, p);
	return m;
}

// (src, line) -> combined row: a dense table over the sources' line ranges, with a Map only for
// lines beyond a source's known length (a Map over every row costs several times more).
function LineIndex() {
	var S = D.sources.length, base = new Int32Array(S + 1);
	for (var s = 0; s < S; s++)
		base[s + 1] = base[s] + (isNum(D.sources[s].nlines) ? D.sources[s].nlines : 0) + 1;
	this.base = base;
	this.dense = new Int32Array(base[S]).fill(-1);
	this.extra = new Map();
}

LineIndex.prototype.get = function (s, line) {
	var b = this.base;
	if (s >= 0 && s < b.length - 1 && line >= 0 && b[s] + line < b[s + 1])
		return this.dense[b[s] + line];
	var r = this.extra.get(s * KEY_LINE + line);
	return r === undefined ? -1 : r;
};

LineIndex.prototype.set = function (s, line, r) {
	var b = this.base;
	if (s >= 0 && s < b.length - 1 && line >= 0 && b[s] + line < b[s + 1])
		this.dense[b[s] + line] = r;
	else
		this.extra.set(s * KEY_LINE + line, r);
};

function buildLines(m, p) {
	var L = D.lines, srcA = list(L.src), lineA = list(L.line), procA = list(L.proc);
	var N = srcA.length, dest = new Int32Array(N), map = new LineIndex(), n = 0, want = selMask(p);
	for (var i = 0; i < N; i++) {
		if (want && want[procA[i]] !== 1) {
			dest[i] = -1;
			continue;
		}
		var j = map.get(srcA[i], lineA[i]);
		if (j < 0) {
			j = n++;
			map.set(srcA[i], lineA[i], j);
		}
		dest[i] = j;
	}
	var src = new Int32Array(n), line = new Int32Array(n);
	for (i = 0; i < N; i++) {
		if (dest[i] >= 0) {
			src[dest[i]] = srcA[i];
			line[dest[i]] = lineA[i];
		}
	}
	m.n = n;
	m.src = src;
	m.line = line;
	m.key = map;
	m.has = {};
	for (var c = 0; c < LINE_COLS.length; c++) {
		var name = LINE_COLS[c], a = L[name];
		if (!Array.isArray(a) || name === "avg_hit_s") {
			m[name] = null;
			continue;
		}
		var out = new Float64Array(n).fill(NaN);
		m.has[name] = accumulate(a, dest, out, !!PEAK_COLS[name]);
		m[name] = out;
	}
	m.avg_hit_s = null;
	if (Array.isArray(L.avg_hit_s)) {
		// Combined rows: total traced time over total hits of the rows that have both.
		var num = new Float64Array(n), den = new Float64Array(n), avg = new Float64Array(n);
		avg.fill(NaN);
		var hitsA = list(L.hits), anyAvg = false;
		for (i = 0; i < N; i++) {
			var d = dest[i], a2 = L.avg_hit_s[i], hc = hitsA[i];
			if (d < 0 || typeof a2 !== "number")
				continue;
			anyAvg = true;
			if (typeof hc === "number" && hc > 0) {
				num[d] += a2 * hc;
				den[d] += hc;
			} else if (avg[d] !== avg[d]) {
				avg[d] = a2;
			}
		}
		for (j = 0; j < n; j++)
			if (den[j] > 0)
				avg[j] = num[j] / den[j];
		m.avg_hit_s = avg;
		m.has.avg_hit_s = anyAvg;
	}

	// Rows of each source (counting sort by source; the views index them by line themselves).
	var S = D.sources.length, start = new Int32Array(S + 1);
	for (j = 0; j < n; j++)
		if (src[j] < S)
			start[src[j] + 1]++;
	for (var s = 0; s < S; s++)
		start[s + 1] += start[s];
	var fill = start.slice(0, S), rows = new Int32Array(start[S]);
	for (j = 0; j < n; j++)
		if (src[j] < S)
			rows[fill[src[j]]++] = j;
	m.srcStart = start;
	m.srcRows = rows;

	// Per-source sums and the report-wide heat maxima (the same scale for every file).
	var T = m.time_s, TT = m.total_s, SM = m.samples, H = m.hits, MC = m.mem_change;
	m.srcTime = new Float64Array(S).fill(NaN);
	m.srcSamples = new Float64Array(S).fill(NaN);
	m.srcHits = new Float64Array(S).fill(NaN);
	m.maxTime = 0;
	m.maxTotal = 0;
	m.maxMem = 0;
	m.sumTime = NaN; // attributed own time of the selection
	for (j = 0; j < n; j++) {
		s = src[j];
		if (s >= S)
			continue;
		if (T && T[j] === T[j]) {
			m.srcTime[s] = (m.srcTime[s] === m.srcTime[s] ? m.srcTime[s] : 0) + T[j];
			m.sumTime = (m.sumTime === m.sumTime ? m.sumTime : 0) + T[j];
			if (T[j] > m.maxTime)
				m.maxTime = T[j];
		}
		if (TT && TT[j] > m.maxTotal)
			m.maxTotal = TT[j];
		if (SM && SM[j] === SM[j])
			m.srcSamples[s] = (m.srcSamples[s] === m.srcSamples[s] ? m.srcSamples[s] : 0) + SM[j];
		if (H && H[j] === H[j])
			m.srcHits[s] = (m.srcHits[s] === m.srcHits[s] ? m.srcHits[s] : 0) + H[j];
		if (MC && MC[j] > m.maxMem)
			m.maxMem = MC[j];
	}
}

// Adds (or, for peaks, takes the maximum of) column a into out[dest[i]]; NaN in out means no
// value yet. Returns whether any value was seen. Kept small so the engine optimizes it per call.
function accumulate(a, dest, out, peak) {
	var any = false, N = dest.length;
	for (var i = 0; i < N; i++) {
		var j = dest[i], v = a[i];
		if (j < 0 || typeof v !== "number")
			continue;
		var o = out[j];
		out[j] = o !== o ? v : peak ? (v > o ? v : o) : o + v;
		any = true;
	}
	return any;
}

// The function table of a selection, built when a view first needs it (a source view does not).
function fnOf(m) {
	if (!m.fn)
		buildFunctions(m, m.proc);
	return m.fn;
}

function buildFunctions(m, p) {
	var F = D.functions, srcA = list(F.src), N = srcA.length, map = new Map();
	var f = {n: 0, src: [], name: [], def_line: [], end_line: [], lines: [], has: {}};
	var cols = {}, want = selMask(p);
	for (var c = 0; c < FN_COLS.length; c++)
		cols[FN_COLS[c]] = Array.isArray(F[FN_COLS[c]]) ? [] : null;
	for (var i = 0; i < N; i++) {
		if (want && want[list(F.proc)[i]] !== 1)
			continue;
		var name = list(F.name)[i] || "?", def = list(F.def_line)[i];
		// numeric key first; a second name at the same definition line gets a string key
		var k = srcA[i] * KEY_LINE + def, j = map.get(k);
		if (j !== undefined && f.name[j] !== name) {
			k = srcA[i] + ":" + def + ":" + name;
			j = map.get(k);
		}
		if (j === undefined) {
			j = f.n++;
			map.set(k, j);
			f.src.push(srcA[i]);
			f.name.push(name);
			f.def_line.push(isNum(def) ? def : NaN);
			f.end_line.push(isNum(list(F.end_line)[i]) ? F.end_line[i] : NaN);
			f.lines.push(isNum(list(F.lines)[i]) ? F.lines[i] : NaN);
			for (c = 0; c < FN_COLS.length; c++)
				if (cols[FN_COLS[c]])
					cols[FN_COLS[c]].push(NaN);
		}
		for (c = 0; c < FN_COLS.length; c++) {
			var col = FN_COLS[c], out = cols[col], v = out && F[col][i];
			if (!out || typeof v !== "number")
				continue;
			out[j] = out[j] === out[j] ? out[j] + v : v;
			f.has[col] = true;
		}
	}
	for (c = 0; c < FN_COLS.length; c++)
		f[FN_COLS[c]] = cols[FN_COLS[c]];
	f.maxTime = 0;
	f.maxTotal = 0;
	for (i = 0; i < f.n; i++) {
		if (f.time_s && f.time_s[i] > f.maxTime)
			f.maxTime = f.time_s[i];
		if (f.total_s && f.total_s[i] > f.maxTotal)
			f.maxTotal = f.total_s[i];
	}
	m.fn = f;
}

// Edges run from a caller line to the called function (callee_src, callee_line = its def line).
function buildEdges(m, p) {
	var E = D.edges, srcA = list(E.src), N = srcA.length, map = new Map();
	var e = {n: 0, src: [], line: [], csrc: [], cline: [], samples: []}, want = selMask(p);
	for (var i = 0; i < N; i++) {
		if (want && want[list(E.proc)[i]] !== 1)
			continue;
		var k = srcA[i] + ":" + E.line[i] + ":" + E.callee_src[i] + ":" + E.callee_line[i];
		var j = map.get(k);
		var v = typeof list(E.samples)[i] === "number" ? E.samples[i] : NaN;
		if (j === undefined) {
			map.set(k, e.n);
			e.src.push(srcA[i]);
			e.line.push(E.line[i]);
			e.csrc.push(E.callee_src[i]);
			e.cline.push(E.callee_line[i]);
			e.samples.push(v);
			e.n++;
		} else if (v === v) {
			e.samples[j] = e.samples[j] === e.samples[j] ? e.samples[j] + v : v;
		}
	}
	e.callees = new Map(); // caller (src, line) -> edge ids
	e.callers = new Map(); // callee function (src, def line) -> edge ids
	for (i = 0; i < e.n; i++) {
		var a = e.src[i] * KEY_LINE + e.line[i], b = e.csrc[i] * KEY_LINE + e.cline[i];
		if (!e.callees.has(a))
			e.callees.set(a, []);
		e.callees.get(a).push(i);
		if (!e.callers.has(b))
			e.callers.set(b, []);
		e.callers.get(b).push(i);
	}
	m.edges = e;
}

// Context links of a line: child invocations it started and Spark actions it triggered.
function buildContext(m, p) {
	var ctx = new Map(), srcs = new Set(), want = selMask(p);
	function add(s, line, item) {
		if (!isNum(s) || !isNum(line))
			return;
		var k = s * KEY_LINE + line;
		if (!ctx.has(k))
			ctx.set(k, []);
		ctx.get(k).push(item);
		srcs.add(s);
	}
	for (var i = 0; i < D.children.length; i++) {
		var c = D.children[i];
		if (c && (!want || want[c.parent_proc] === 1))
			add(c.src, c.line, {kind: "child", i: i});
	}
	var acts = D.spark && list(D.spark.actions);
	for (i = 0; acts && i < acts.length; i++)
		if (acts[i] && (!want || want[acts[i].proc] === 1))
			add(acts[i].src, acts[i].line, {kind: "spark", i: i});
	m.ctx = ctx;
	m.ctxSrcs = srcs;
}

// Which views have data (a view with nothing to show is hidden).
function hasMemory() {
	return !!(D.memory && list(D.memory.procs).length) ||
	       (Array.isArray(D.lines.mem_change) && D.run.capabilities.memory !== false &&
		D.lines.mem_change.some(isNum));
}

function hasGpu() {
	return !!(D.gpu && (list(D.gpu.devices).length || list(D.gpu.notes).length)) ||
	       (Array.isArray(D.lines.gpu_s) && D.lines.gpu_s.some(isNum));
}

function hasSpark() {
	return !!(D.spark && list(D.spark.actions).length);
}
