// SPDX-License-Identifier: MIT
// Flame graph: the call tree of the samples (D.flame) as an icicle on a <canvas>, root at the top,
// the callers above their callees. Click zooms, the breadcrumb zooms out, the search box marks
// matching frames and sums their share (each sample once), double-click opens the source line.
// The tree is checked and aggregated once; a draw lays out only the frames wider than half a
// pixel, so 100,000 stacks stay smooth. Names reach the page as canvas text or textContent.

VIEWS.flame = {label: "Flame graph", icon: "\u2583", when: hasFlame, render: renderFlame};

var FL_ROW = 18;       // px per frame row
var FL_MIN_W = 0.5;    // frames narrower than this (px) are coalesced with their narrow siblings
var FL_KIND = {real: 0, wait: 1, gil: 2, runq: 3, top: 4};
var FL_KIND_NAME = ["", "[waiting: I/O, sleep, locks]", "[waiting for the GIL]", "[waiting for a CPU]"];
var FL_METRICS = {samples: "CPU samples", cpu: "CPU time", wall: "Wall time"};
var FL_SPECIAL = {"-1": "process", "-2": "[native]", "-3": "(other)"};

UI.flame = {
	metric : null,
	query : "",
	diff : false
};

function hasFlame() {
	var f = D.flame;
	return !!(f && f.nodes && Array.isArray(f.nodes.parent) && f.nodes.parent.length);
}

var flameCache = {};

function hasDiffFlame()
{
	var f = D.diff_flame;
	return !!(f && f.nodes && Array.isArray(f.nodes.parent) && f.nodes.parent.length);
}

// The checked tree: every column as a typed array; nodes that break the shape (a parent not
// before its child, a process out of range) make the whole tree unusable rather than wrong.
// diff: the differential tree of a `report --diff` (D.diff_flame: all processes merged, with
// the base's self values beside the new ones).
function flameData(diff)
{
	var key = diff ? "diff" : "plain";
	if (flameCache[key])
		return flameCache[key];
	var F = diff ? D.diff_flame : D.flame, N = F.nodes, n = N.parent.length, fn = F.funcs || {};
	var names = list(fn.name), nf = names.length;
	var out = {
		n : n,
		parent : new Int32Array(n),
		func : new Int32Array(n),
		proc : new Int32Array(n),
		line : new Int32Array(n),
		samples : new Float64Array(n),
		cpu : new Float64Array(n),
		wait : new Float64Array(n),
		gil : new Float64Array(n),
		runq : new Float64Array(n),
		wall : false,
		hasSamples : Array.isArray(N.samples),
		error : null,
		fname : [],
		fsrc : [],
		fdef : [],
		fpath : [],
		folded : isNum(F.folded) ? F.folded : 0,
		maxNodes : F.max_nodes,
		diff : !!diff
	};
	if (diff) {
		out.bsamples = new Float64Array(n);
		out.bcpu = new Float64Array(n);
		out.bwait = new Float64Array(n);
		out.bgil = new Float64Array(n);
		out.brunq = new Float64Array(n);
	}
	function int(col, i, lo, hi) {
		var v = Array.isArray(col) ? col[i] : 0;
		return Number.isInteger(v) && v >= lo && v <= hi ? v : null;
	}
	function val(col, i) {
		var v = Array.isArray(col) ? col[i] : 0;
		return isNum(v) && v > 0 && v < 1e300 ? v : 0;
	}
	for (var f = 0; f < nf; f++) {
		out.fname.push(typeof names[f] === "string" ? names[f] : "?");
		var s = int(fn.src, f, 0, D.sources.length - 1);
		out.fsrc.push(s === null || !D.sources[s] ? -1 : s);
		var dl = int(fn.def_line, f, 1, 2147483647);
		out.fdef.push(dl === null ? 0 : dl);
		out.fpath.push(Array.isArray(fn.path) && typeof fn.path[f] === "string" ? fn.path[f]
											: "");
	}
	for (var i = 0; i < n && !out.error; i++) {
		var p = int(N.parent, i, -1, i - 1), pr = int(N.proc, i, 0, D.processes.length - 1);
		var fu = int(N.func, i, -3, nf - 1), ln = int(N.line, i, 0, 2147483647);
		if (p === null || pr === null || fu === null || (p < 0) !== (fu === -1) ||
		    (p >= 0 && out.proc[p] !== pr)) {
			out.error = "node " + i + " is damaged";
			break;
		}
		out.parent[i] = p;
		out.proc[i] = pr;
		out.func[i] = fu;
		out.line[i] = ln === null ? 0 : ln;
		out.samples[i] = val(N.samples, i);
		out.cpu[i] = val(N.cpu_s, i);
		out.wait[i] = val(N.wait_s, i);
		out.gil[i] = val(N.gil_wait_s, i);
		out.runq[i] = val(N.runq_s, i);
		if (diff) {
			out.bsamples[i] = val(N.base_samples, i);
			out.bcpu[i] = val(N.base_cpu_s, i);
			out.bwait[i] = val(N.base_wait_s, i);
			out.bgil[i] = val(N.base_gil_wait_s, i);
			out.brunq[i] = val(N.base_runq_s, i);
		}
	}
	// Wall time only when something waited: a wall-mode recording may have no off-CPU time
	for (i = 0; i < n && !out.wall; i++)
		out.wall = out.wait[i] > 0 || out.gil[i] > 0 || out.runq[i] > 0 ||
			   (diff && (out.bwait[i] > 0 || out.bgil[i] > 0 || out.brunq[i] > 0));
	out.match = new Uint8Array(n);
	flameCache[key] = out;
	return out;
}

// The tree for one metric and selection: the real nodes, a top node over the process roots, and
// in wall time a leaf per wait kind under each frame that waited. Children heaviest first.
function flameTree(fd, metric, p) {
	var n = fd.n, extra = 0, i, k;
	var waits = metric === "wall" ? [fd.wait, fd.gil, fd.runq] : [];
	for (i = 0; i < n; i++)
		for (k = 0; k < waits.length; k++)
			if (waits[k][i] > 0 ||
			    (fd.diff && fd["b" + [ "wait", "gil", "runq" ][k]][i] > 0))
				extra++;
	var N = n + 1 + extra, top = n;
	var t = {N: N, top: top, parent: new Int32Array(N), kind: new Uint8Array(N), src: new Int32Array(N),
		 self: new Float64Array(N), tot: new Float64Array(N), depth: new Int32Array(N)};
	var selfArr = metric === "samples" ? fd.samples : fd.cpu, x = n + 1;
	// a diff also adds up the base: bself/btot beside self/tot, over the same nodes
	var bwaits = fd.diff && metric === "wall" ? [ fd.bwait, fd.bgil, fd.brunq ] : [];
	var bselfArr = fd.diff ? (metric === "samples" ? fd.bsamples : fd.bcpu) : null;
	if (fd.diff) {
		t.bself = new Float64Array(N);
		t.btot = new Float64Array(N);
	}
	t.parent[top] = -1;
	t.kind[top] = FL_KIND.top;
	t.src[top] = -1;
	var want = selMask(p);
	for (i = 0; i < n; i++) {
		var keep = !want || want[fd.proc[i]] === 1;
		t.parent[i] = fd.parent[i] < 0 ? top : fd.parent[i];
		t.src[i] = i;
		t.self[i] = keep ? selfArr[i] : 0;
		if (bselfArr)
			t.bself[i] = bselfArr[i];
		for (k = 0; k < waits.length; k++)
			if (waits[k][i] > 0 || (bwaits.length && bwaits[k][i] > 0)) {
				t.parent[x] = i;
				t.kind[x] = k + 1;
				t.src[x] = i;
				t.self[x] = keep ? waits[k][i] : 0;
				if (bwaits.length)
					t.bself[x] = bwaits[k][i];
				x++;
			}
	}
	for (i = 0; i < N; i++)
		t.tot[i] = t.self[i];
	// children come after their parents, except the process roots (below the top node, last)
	for (i = N - 1; i >= 0; i--)
		if (i !== top)
			t.tot[t.parent[i]] += t.tot[i];
	if (fd.diff) {
		for (i = 0; i < N; i++)
			t.btot[i] = t.bself[i];
		for (i = N - 1; i >= 0; i--)
			if (i !== top)
				t.btot[t.parent[i]] += t.btot[i];
	}
	var cnt = new Int32Array(N + 1);
	for (i = 0; i < N; i++)
		if (i !== top && t.tot[i] > 0)
			cnt[t.parent[i] + 1]++;
	for (i = 0; i < N; i++)
		cnt[i + 1] += cnt[i];
	var kids = new Int32Array(cnt[N]), fill = cnt.slice(0, N);
	for (i = 0; i < N; i++)
		if (i !== top && t.tot[i] > 0)
			kids[fill[t.parent[i]]++] = i;
	var tot = t.tot;
	for (i = 0; i < N; i++)
		if (cnt[i + 1] - cnt[i] > 1)
			kids.subarray(cnt[i], cnt[i + 1]).sort(function (a, b) {
				return tot[b] - tot[a] || a - b;
			});
	t.kidStart = cnt;
	t.kids = kids;
	// the top node stands for the selection; a selected process has its own root under it
	t.root = top;
	t.topName = p === -1 ? "All processes" : selName(p);
	if (p >= 0)
		for (k = cnt[top]; k < cnt[top + 1]; k++)
			if (fd.proc[kids[k]] === p)
				t.root = kids[k];
	return t;
}

function flameName(fd, t, v) {
	var kd = t.kind[v];
	if (kd === FL_KIND.top)
		return t.topName || "All processes";
	if (kd !== FL_KIND.real)
		return FL_KIND_NAME[kd];
	var i = t.src[v], f = fd.func[i];
	if (f >= 0)
		return fd.fname[f];
	if (f === -1)
		return fd.diff ? "All processes" : procShort(fd.proc[i]);
	return FL_SPECIAL[f];
}

// Source and line of a frame, or null.
function flameLoc(fd, t, v) {
	if (t.kind[v] !== FL_KIND.real)
		return null;
	var i = t.src[v], f = fd.func[i];
	if (f < 0 || fd.fsrc[f] < 0)
		return null;
	return {src: fd.fsrc[f], line: fd.line[i], def: fd.fdef[f]};
}

function flameColors() {
	var cs = getComputedStyle(document.documentElement);
	var g = function (k, d) {
		return cs.getPropertyValue(k).trim() || d;
	};
	return {bg: g("--panel", "#fff"), text: g("--fl-text", "#111"), muted: g("--muted", "#666"),
		sat: parseFloat(g("--fl-sat", "70")), light: parseFloat(g("--fl-light", "68")),
		lib: g("--fl-lib-hue", "190"), native: g("--fl-native", "#9aa"), other: g("--fl-other", "#bbb"),
		wait: g("--fl-wait", "#58c"), gil: g("--fl-gil", "#a6d"), runq: g("--fl-runq", "#cb5"),
		top: g("--fl-top", "#cdd"), match: g("--fl-match", "#e0f"), dim: g("--fl-dim", "#ddd"),
		focus: g("--text", "#000")};
}

// A diff's colour: red where a frame's share of its profile's total grew, blue where it shrank,
// the stronger the larger the change (against the largest change in the tree), grey for none.
function flameDiffFill(t, v, C)
{
	var ds = flameShareDelta(t, v),
	    a = t.maxDelta > 0 ? Math.min(1, Math.abs(ds) / t.maxDelta) : 0;
	if (!(a > 0.02))
		return C.top;
	return "hsl(" + (ds > 0 ? 2 : 218) + " " + Math.round(35 + 50 * a) + "% " +
	       Math.round(C.light + (1 - a) * (96 - C.light) * 0.6 - a * 12) + "%)";
}

// new share - base share of a frame: each normalised by its own profile's total
function flameShareDelta(t, v)
{
	var T = t.tot[t.root], B = t.btot[t.root];
	return (T > 0 ? t.tot[v] / T : 0) - (B > 0 ? t.btot[v] / B : 0);
}

// The largest |share change| of a tree, the scale of the diff colours.
function flameMaxDelta(t)
{
	var m = 0;
	for (var v = 0; v < t.N; v++)
		if (v !== t.root && t.kind[v] !== FL_KIND.top)
			m = Math.max(m, Math.abs(flameShareDelta(t, v)));
	return m;
}

// A stable colour per function: warm hues for project code, cool ones for libraries.
function flameFill(fd, t, v, C) {
	if (fd.diff && t.kind[v] !== FL_KIND.top)
		return flameDiffFill(t, v, C);
	var kd = t.kind[v];
	if (kd === FL_KIND.wait)
		return C.wait;
	if (kd === FL_KIND.gil)
		return C.gil;
	if (kd === FL_KIND.runq)
		return C.runq;
	if (kd === FL_KIND.top)
		return C.top;
	var f = fd.func[t.src[v]];
	if (f === -1)
		return C.top;
	if (f === -2)
		return C.native;
	if (f === -3)
		return C.other;
	var name = fd.fname[f], h = 0;
	for (var i = 0; i < name.length; i++)
		h = (h * 31 + name.charCodeAt(i)) >>> 0;
	var lib = fd.fsrc[f] >= 0 && D.sources[fd.fsrc[f]].kind === "library";
	var hue = lib ? Number(C.lib) + (h % 30) : 8 + (h % 42);
	return "hsl(" + hue + " " + C.sat + "% " + (C.light - 6 + ((h >> 8) % 12)) + "%)";
}

function renderFlame(root, r) {
	root.className = "content page flame";
	if (!hasDiffFlame())
		UI.flame.diff = false;
	var fd = flameData(UI.flame.diff), selp = fd.diff ? -1 : SEL; // a diff merges the processes
	var want = selMask(selp);
	root.appendChild(viewHead("Flame graph", "Where does the time go, call path by call path?",
				  helpLink("flame-graph", {class: "more"}, "Reading the flame graph \u2197")));
	if (fd.error) {
		root.appendChild(el("p", {class: "notice bad"}, "The flame graph data is damaged (" + fd.error + ")."));
		return {};
	}
	var metrics = ["samples", "cpu"].concat(fd.wall ? ["wall"] : []);
	if (!fd.hasSamples)
		metrics.shift();
	var st = UI.flame;
	if (metrics.indexOf(st.metric) < 0)
		st.metric = fd.wall ? "wall" : metrics[0];
	var F = flameView(fd, selp, want);
	flameControls(F, root, metrics);
	flameCanvasEvents(F);
	flameSearchEvents(F);
	function onKey(ev) {
		if (ev.key === "/" && document.activeElement !== F.search && !/^(INPUT|TEXTAREA|SELECT)$/.test(ev.target.tagName)) {
			ev.preventDefault();
			F.search.focus();
			F.search.select();
		}
	}
	document.addEventListener("keydown", onKey);
	var theme = new MutationObserver(function () {
		F.C = flameColors();
		flameDraw(F);
	});
	theme.observe(document.documentElement, {attributes: true, attributeFilter: ["data-theme"]});
	var resizeTimer = 0;
	function onResize() {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(F.draw, 100);
	}
	window.addEventListener("resize", onResize);

	flameRebuild(F, false);
	mark("ls-flame-drawn");
	requestAnimationFrame(function () {
		setTimeout(function () {
			mark("ls-flame-ready");
		}, 0);
	});
	return {
		destroy: function () {
			document.removeEventListener("keydown", onKey);
			window.removeEventListener("resize", onResize);
			theme.disconnect();
			F.tip.remove();
		},
	};
}

// The flame view's state: the data and selection it shows, the tree of the current weight (t),
// the zoomed and focused nodes, the laid-out rows of boxes, and its elements.
function flameView(fd, selp, want) {
	var F = {fd: fd, selp: selp, want: want, st: UI.flame, t: null, zoom: -1, focus: -1,
		 C: flameColors(), rows: [], maxRow: 0, zoomRow: 0, crumbsFor: null,
		 sumCache: {t: null, v: -1, cpu: 0, samples: 0}};
	F.canvas = el("canvas", {class: "flamecanvas", tabindex: "0", role: "img",
				 "aria-label": "Flame graph; arrow keys move between frames, Enter zooms, Escape zooms out"});
	F.wrap = el("div", {class: "flamewrap"}, F.canvas);
	F.tip = el("div", {class: "flametip", role: "tooltip", hidden: true});
	F.crumbs = el("nav", {class: "crumbs", "aria-label": "Zoom path"});
	F.search = el("input", {type: "search", class: "flamesearch", placeholder: "Search functions and files (/)",
				"aria-label": "Search frames"});
	F.search.value = F.st.query;
	F.found = el("span", {class: "flamefound", "aria-live": "polite"});
	F.detail = el("div", {class: "flamedetail", "aria-live": "polite"});
	F.summary = el("span", {class: "flametotal"});
	F.draw = function () {
		flameDraw(F);
	};
	return F;
}

function flameSwatch(cls, label) {
	return el("span", {class: "lg"}, el("i", {class: "sw " + cls}), label);
}

// What the colours mean, in this profile or in a diff.
function flameLegend(fd) {
	var legend = el("div", {class: "flamelegend"});
	if (fd.diff) {
		legend.appendChild(flameSwatch("up", "larger share of the total than in the base"));
		legend.appendChild(flameSwatch("down", "smaller share"));
		legend.appendChild(el(
			"span", {class : "lg norm"},
			"Width: the new profile; colour: each frame's share " +
				"of its own profile's total, new minus base (so runs of different length compare)"));
	} else {
		legend.appendChild(flameSwatch("py", "project code"));
		legend.appendChild(flameSwatch("lib", "library"));
	}
	legend.appendChild(flameSwatch("nat", "[native]: no Python frame"));
	if (fd.folded)
		legend.appendChild(flameSwatch("oth", "(other): " + fmtCount(fd.folded) + " small frames folded"));
	if (fd.wall && !fd.diff) { // a diff colours waits by change too; their frames are named
		legend.appendChild(flameSwatch("wt", "waiting: I/O, sleep, locks"));
		legend.appendChild(flameSwatch("gil", "waiting for the GIL"));
		legend.appendChild(flameSwatch("rq", "waiting for a CPU"));
	}
	return legend;
}

// The bar (weight, diff switch, search, total), legend, breadcrumbs, canvas and detail row.
function flameControls(F, root, metrics) {
	var st = F.st;
	var legend = flameLegend(F.fd);
	var seg = segmented("Weight", "flame-graph", metrics.map(function (k) {
		return {value: k, label: FL_METRICS[k]};
	}), st.metric, function (v) {
		st.metric = v;
		flameRebuild(F, true);
	}, "flame-metric");
	var show = hasDiffFlame()
			   ? segmented("Show", "diffs",
				       [
					       {value : "new", label : "This profile"},
					       {value : "diff", label : "Change against the base"}
				       ],
				       st.diff ? "diff" : "new",
				       function(v) {
					       st.diff = v === "diff";
					       render();
				       },
				       "flame-show")
			   : null;
	root.appendChild(el("div", {class : "flamebar"}, show, seg,
			    el("div", {class : "control"}, F.search, F.found), F.summary));
	root.appendChild(legend);
	root.appendChild(F.crumbs);
	root.appendChild(F.wrap);
	root.appendChild(F.detail);
	document.body.appendChild(F.tip);
}

function flameMetricText(F, v) {
	return F.st.metric === "samples" ? fmtCount(v) + " samples" : fmtTime(v);
}

// "+12 ms, share +3.1 pp": the change in value and in share of each profile's total
function flameChangeText(F, v) {
	var t = F.t, d = t.tot[v] - t.btot[v], ds = flameShareDelta(t, v) * 100;
	return (d > 0	? "+"
		: d < 0 ? "\u2212"
			: "") +
	       flameMetricText(F, Math.abs(d)) + ", share " + (ds >= 0 ? "+" : "\u2212") +
	       Math.abs(ds).toFixed(1) + " pp";
}

function flameShare(F, value) {
	return F.t.tot[F.t.root] > 0 ? value / F.t.tot[F.t.root] : NaN;
}

function flameIsAncestor(t, a, v) { // a is v or above it
	for (; v >= 0; v = v === t.root ? -1 : t.parent[v])
		if (v === a)
			return true;
	return false;
}

// A new tree for the current weight; keep: stay zoomed on the same frame when it is still there.
function flameRebuild(F, keep) {
	var fd = F.fd, zoom = F.zoom, t = F.t;
	var zl = keep && zoom >= 0 ? t.src[zoom] : -1, zk = keep && zoom >= 0 ? t.kind[zoom] : 0;
	t = F.t = flameTree(fd, F.st.metric, F.selp);
	if (fd.diff)
		t.maxDelta = flameMaxDelta(t);
	F.zoom = t.root;
	if (zl >= 0 && zk === FL_KIND.real && flameIsAncestor(t, t.root, zl) && t.tot[zl] > 0)
		F.zoom = zl;
	F.focus = F.zoom;
	F.summary.textContent = fd.diff ? "New " + flameMetricText(F, t.tot[t.root]) + ", base " +
						  flameMetricText(F, t.btot[t.root]) +
						  " (all processes)"
					: "Total " + flameMetricText(F, t.tot[t.root]) +
						  (F.selp !== -1 ? " in " + selName(F.selp) : "");
	if (fd.diff)
		F.summary.setAttribute("data-base-total", String(t.btot[t.root]));
	F.summary.setAttribute("data-total", String(t.tot[t.root]));
	flameApplySearch(F);
	flameDraw(F);
}

// ---- layout and drawing ----------------------------------------------------------------

function flameLayout(F, W) {
	var t = F.t, zoom = F.zoom, rows = F.rows = [];
	var anc = [];
	for (var v = zoom; v !== t.root; v = t.parent[v])
		anc.unshift(t.parent[v]);
	anc.push(zoom);
	// the zoom path, full width (dimmed above the zoomed frame)
	anc.forEach(function (a, d) {
		rows[d] = [{v: a, x: 0, w: W}];
	});
	var base = anc.length - 1, scale = t.tot[zoom] > 0 ? W / t.tot[zoom] : 0;
	var stack = [zoom, 0, base];
	var maxRow = F.zoomRow = base;
	while (stack.length) {
		var d = stack.pop(), x = stack.pop(), u = stack.pop(), ks = t.kidStart, cx = x, small = 0, ns = 0;
		if (d + 1 > 2000)
			continue;
		for (var k = ks[u]; k < ks[u + 1]; k++) {
			var c = t.kids[k], w = t.tot[c] * scale;
			if (w < FL_MIN_W) {
				small += w;
				ns++;
				continue;
			}
			(rows[d + 1] = rows[d + 1] || []).push({v: c, x: cx, w: w});
			if (d + 1 > maxRow)
				maxRow = d + 1;
			stack.push(c, cx, d + 1);
			cx += w;
		}
		if (small >= FL_MIN_W) {
			(rows[d + 1] = rows[d + 1] || []).push({v: -1, x: cx, w: small, n: ns, val: small / scale});
			maxRow = Math.max(maxRow, d + 1);
		}
	}
	F.maxRow = maxRow;
	rows.forEach(function (rw) {
		rw.sort(function (a, b) {
			return a.x - b.x;
		});
	});
}

function flameDraw(F) {
	var fd = F.fd, t = F.t, C = F.C, canvas = F.canvas;
	var W = Math.max(200, F.wrap.clientWidth), dpr = window.devicePixelRatio || 1;
	flameLayout(F, W);
	var rows = F.rows, zoomRow = F.zoomRow, focus = F.focus;
	var H = (F.maxRow + 1) * FL_ROW;
	canvas.width = Math.round(W * dpr);
	canvas.height = Math.round(H * dpr);
	canvas.style.width = W + "px";
	canvas.style.height = H + "px";
	var g = canvas.getContext("2d");
	g.setTransform(dpr, 0, 0, dpr, 0, 0);
	g.fillStyle = C.bg;
	g.fillRect(0, 0, W, H);
	g.font = "12px " + getComputedStyle(canvas).fontFamily;
	g.textBaseline = "middle";
	var cw = g.measureText("abcdefghij").width / 10 || 7, searching = !!F.st.query;
	for (var d = 0; d < rows.length; d++) {
		var rw = rows[d] || [], y = d * FL_ROW;
		for (var j = 0; j < rw.length; j++) {
			var b = rw[j];
			if (b.v < 0) {
				g.fillStyle = C.other;
				g.fillRect(b.x, y, Math.max(b.w, 0.5), FL_ROW - 1);
				continue;
			}
			var m = searching && flameIsMatch(F, b.v);
			g.fillStyle = m ? C.match : searching ? C.dim : flameFill(fd, t, b.v, C);
			g.globalAlpha = d < zoomRow ? 0.55 : 1;
			g.fillRect(b.x, y, Math.max(b.w - (b.w > 3 ? 1 : 0), 0.5), FL_ROW - 1);
			g.globalAlpha = 1;
			if (b.w > 24) {
				var s = flameLabel(F, b.v), fit = Math.floor((b.w - 6) / cw);
				if (s.length > fit)
					s = flameName(fd, t, b.v);
				if (s.length > fit)
					s = fit > 1 ? s.slice(0, fit - 1) + "\u2026" : "";
				if (s) {
					g.fillStyle = C.text;
					g.fillText(s, b.x + 3, y + FL_ROW / 2);
				}
			}
			if (b.v === focus && document.activeElement === canvas) {
				g.strokeStyle = C.focus;
				g.lineWidth = 2;
				g.strokeRect(b.x + 1, y + 1, Math.max(b.w - 2, 1), FL_ROW - 3);
			}
		}
	}
	flameDrawCrumbs(F);
	flameShowDetail(F, focus);
	canvas.setAttribute("data-zoom", String(F.zoom));
	canvas.setAttribute("data-focus", String(focus));
}

// "main (app.py:27)" as py-spy writes frames: a function has a box per line it ran
function flameLabel(F, v) {
	var loc = flameLoc(F.fd, F.t, v);
	return flameName(F.fd, F.t, v) + (loc ? " (" + locText(loc.src, loc.line) + ")" : "");
}

function flameRowOf(rows, v) {
	for (var d = 0; d < rows.length; d++)
		if (rows[d] && flameFindIn(rows[d], v))
			return d;
	return -1;
}
function flameFindIn(rw, v) {
	for (var j = 0; j < rw.length; j++)
		if (rw[j].v === v)
			return rw[j];
	return null;
}
function flameBoxOf(F, v) {
	var d = flameRowOf(F.rows, v);
	return d < 0 ? null : {d: d, b: flameFindIn(F.rows[d], v)};
}
function flameHit(F, ev) {
	var b = flameHitBox(F, ev);
	return b ? b.v : -1;
}
function flameHitBox(F, ev) {
	var r = F.canvas.getBoundingClientRect(), x = ev.clientX - r.left, d = Math.floor((ev.clientY - r.top) / FL_ROW);
	var rw = F.rows[d];
	if (!rw)
		return null;
	var lo = 0, hi = rw.length - 1;
	while (lo <= hi) {
		var mid = (lo + hi) >> 1, b = rw[mid];
		if (x < b.x)
			hi = mid - 1;
		else if (x >= b.x + b.w)
			lo = mid + 1;
		else
			return b;
	}
	return null;
}

// rebuilt only when the zoom changes: a draw on blur must not replace the button being clicked
function flameDrawCrumbs(F) {
	var t = F.t, zoom = F.zoom, crumbs = F.crumbs;
	if (F.crumbsFor === t && +crumbs.getAttribute("data-zoom") === zoom)
		return;
	F.crumbsFor = t;
	crumbs.setAttribute("data-zoom", String(zoom));
	clear(crumbs);
	var path = [];
	for (var v = zoom; ; v = t.parent[v]) {
		path.unshift(v);
		if (v === t.root)
			break;
	}
	path.forEach(function (v, i) {
		if (i)
			crumbs.appendChild(el("span", {class: "sep", "aria-hidden": "true"}, "\u203a"));
		var b = el("button", {type: "button", class: "crumb", "data-node": String(v),
				      "aria-current": v === zoom ? "true" : null}, flameName(F.fd, t, v));
		b.addEventListener("click", function () {
			flameZoomTo(F, v);
		});
		crumbs.appendChild(b);
	});
}

function flameShowDetail(F, v) {
	var fd = F.fd, t = F.t, detail = F.detail;
	clear(detail);
	if (v < 0)
		return;
	var loc = flameLoc(fd, t, v);
	detail.setAttribute("data-node", String(v));
	detail.appendChild(el("b", {class: "fname"}, flameName(fd, t, v)));
	if (loc) {
		detail.appendChild(srcLink(loc.src, loc.line, null, "flameline"));
		if (loc.def)
			detail.appendChild(el("a", {class: "flamefunc", href: srcHref(loc.src, loc.def)}, "function"));
	}
	detail.appendChild(el("span", {class : "num"},
			      flameMetricText(F, t.tot[v]) + " \u00b7 " + fmtPct(flameShare(F, t.tot[v])) +
				      " of total" +
				      (fd.diff ? " \u00b7 " + flameChangeText(F, v) : "")));
}

function flameShowTip(F, box, ev) {
	var fd = F.fd, t = F.t, tip = F.tip, st = F.st;
	var v = box ? box.v : -1;
	if (!box) {
		tip.hidden = true;
		return;
	}
	clear(tip);
	if (v < 0) { // narrow frames drawn as one block
		tip.appendChild(el("div", {class: "tname"}, fmtCount(box.n) + " frames too narrow to draw"));
		tip.appendChild(el("div", {class: "thint"}, flameMetricText(F, box.val) + " \u00b7 " + fmtPct(flameShare(F, box.val)) +
				       " of total; zoom into their parent to see them"));
		flamePlaceTip(F, ev);
		return;
	}
	var loc = flameLoc(fd, t, v);
	tip.appendChild(el("div", {class: "tname"}, flameName(fd, t, v)));
	if (loc)
		tip.appendChild(el("div", {class: "tloc"}, (D.sources[loc.src].path || D.sources[loc.src].name) + ":" +
					   shownLine(loc.src, loc.line)));
	var dl = el("dl");
	function row(k, val) {
		dl.appendChild(el("dt", null, k));
		dl.appendChild(el("dd", null, val));
	}
	row(FL_METRICS[st.metric], flameMetricText(F, t.tot[v]) + (t.self[v] > 0 && t.kidStart[v + 1] > t.kidStart[v]
								  ? " (self " + flameMetricText(F, t.self[v]) + ")" : ""));
	row("Share", fmtPct(flameShare(F, t.tot[v])) + " of total");
	if (fd.diff) {
		row("Base", flameMetricText(F, t.btot[v]));
		row("Change", flameChangeText(F, v));
	}
	if (t.kind[v] === FL_KIND.real || t.kind[v] === FL_KIND.top) {
		if (st.metric !== "cpu")
			row("CPU time", fmtTime(flameSubtreeSum(F, v, fd.cpu)));
		if (fd.hasSamples && st.metric !== "samples")
			row("Samples", fmtCount(flameSubtreeSum(F, v, fd.samples)));
	}
	tip.appendChild(dl);
	tip.appendChild(el("div", {class: "thint"}, loc ? "Click to zoom \u00b7 double-click opens the line" : "Click to zoom"));
	flamePlaceTip(F, ev);
}

function flamePlaceTip(F, ev) {
	var tip = F.tip;
	tip.hidden = false;
	var x = ev.clientX + 14, y = ev.clientY + 14, tw = tip.offsetWidth, th = tip.offsetHeight;
	if (x + tw > window.innerWidth - 8)
		x = Math.max(8, ev.clientX - tw - 14);
	if (y + th > window.innerHeight - 8)
		y = Math.max(8, ev.clientY - th - 14);
	tip.style.left = x + "px";
	tip.style.top = y + "px";
}

// a column summed below a node, whatever the metric (tooltips only: one subtree walk, kept)
function flameSubtreeSum(F, v, arr) {
	var fd = F.fd, t = F.t, want = F.want, c = F.sumCache;
	if (c.t !== t || c.v !== v) {
		c = F.sumCache = {t: t, v: v, cpu: 0, samples: 0};
		var todo = [v];
		while (todo.length) {
			var u = todo.pop();
			if (u < fd.n && (!want || want[fd.proc[u]] === 1)) {
				c.cpu += fd.cpu[u];
				c.samples += fd.samples[u];
			}
			for (var k = t.kidStart[u]; k < t.kidStart[u + 1]; k++)
				todo.push(t.kids[k]);
		}
	}
	return arr === fd.cpu ? c.cpu : c.samples;
}

// ---- search --------------------------------------------------------------------------

function flameIsMatch(F, v) {
	return F.t.kind[v] === FL_KIND.real && F.fd.match[F.t.src[v]] === 1;
}

function flameApplySearch(F) {
	var fd = F.fd, t = F.t, found = F.found;
	var q = F.st.query.trim().toLowerCase(), n = fd.n, i;
	fd.match.fill(0);
	clear(found);
	if (!q)
		return;
	var fm = fd.fname.map(function (nm, f) {
		var s = fd.fsrc[f] >= 0 ? D.sources[fd.fsrc[f]] : null;
		return (nm + " " + (s ? s.path || s.name : "")).toLowerCase().indexOf(q) >= 0;
	});
	var nm = 0;
	for (i = 0; i < n; i++) {
		var f = fd.func[i];
		if (f >= 0 ? fm[f] : f !== -1 && FL_SPECIAL[f].indexOf(q) >= 0) {
			fd.match[i] = 1;
			nm++;
		}
	}
	// a sample counts once however many matching frames its stack has: the time of every
	// node at or below a match, in the shown selection
	var cov = new Uint8Array(t.N), sum = 0;
	for (i = 0; i < t.N; i++) {
		if (i === t.top)
			continue;
		var p = t.parent[i];
		cov[i] = (t.kind[i] === FL_KIND.real && fd.match[i]) || (p !== t.top && cov[p]) ? 1 : 0;
		if (cov[i]) // nodes outside the selection have no self value in t
			sum += t.self[i];
	}
	found.textContent = fmtCount(nm) + (nm === 1 ? " frame" : " frames") + " \u00b7 " +
			    flameMetricText(F, sum) + " \u00b7 " + fmtPct(flameShare(F, sum)) + " of total";
	found.setAttribute("data-share", String(flameShare(F, sum)));
	found.setAttribute("data-value", String(sum));
}

function flameSearchEvents(F) {
	var search = F.search, st = F.st, timer = 0;
	search.addEventListener("input", function () {
		clearTimeout(timer);
		timer = setTimeout(function () {
			st.query = search.value;
			flameApplySearch(F);
			flameDraw(F);
		}, 80);
	});
	search.addEventListener("keydown", function (ev) {
		if (ev.key === "Enter") {
			clearTimeout(timer);
			st.query = search.value;
			flameApplySearch(F);
			flameDraw(F);
		} else if (ev.key === "Escape") {
			F.canvas.focus();
		}
	});
}

// ---- interaction -----------------------------------------------------------------------

function flameZoomTo(F, v) {
	if (v < 0 || !(F.t.tot[v] > 0))
		return;
	F.zoom = v;
	F.focus = v;
	flameDraw(F);
}

function flameOpenSource(F, v) {
	var loc = flameLoc(F.fd, F.t, v);
	if (loc)
		location.hash = srcHref(loc.src, loc.line);
}

// the frame next to v in its row (dir -1 left, 1 right)
function flameBeside(F, v, dir) {
	var bx = flameBoxOf(F, v);
	if (!bx)
		return v;
	var rw = F.rows[bx.d], j = rw.indexOf(bx.b) + dir;
	while (j >= 0 && j < rw.length && rw[j].v < 0)
		j += dir;
	return j >= 0 && j < rw.length ? rw[j].v : v;
}

function flameFirstChild(F, v) {
	var t = F.t;
	for (var k = t.kidStart[v]; k < t.kidStart[v + 1]; k++)
		if (flameBoxOf(F, t.kids[k]))
			return t.kids[k];
	return v;
}

// Arrow keys move the focus between frames, Enter zooms on it, Escape zooms out.
function flameKey(F, ev) {
	var t = F.t, focus = F.focus, v = focus;
	switch (ev.key) {
	case "ArrowUp":
		v = focus === t.root ? focus : t.parent[focus];
		break;
	case "ArrowDown":
		v = flameFirstChild(F, focus);
		break;
	case "ArrowLeft":
		v = flameBeside(F, focus, -1);
		break;
	case "ArrowRight":
		v = flameBeside(F, focus, 1);
		break;
	case "Enter":
		flameZoomTo(F, focus);
		ev.preventDefault();
		return;
	case "Escape":
		if (F.zoom !== t.root)
			flameZoomTo(F, t.parent[F.zoom]);
		ev.preventDefault();
		return;
	default:
		return;
	}
	ev.preventDefault();
	F.focus = v;
	flameDraw(F);
}

function flameCanvasEvents(F) {
	var canvas = F.canvas;
	canvas.addEventListener("mousemove", function (ev) {
		var b = flameHitBox(F, ev);
		canvas.style.cursor = b && b.v >= 0 ? "pointer" : "default";
		flameShowTip(F, b, ev);
	});
	canvas.addEventListener("mouseleave", function () {
		F.tip.hidden = true;
	});
	canvas.addEventListener("click", function (ev) {
		var v = flameHit(F, ev);
		if (v >= 0)
			flameZoomTo(F, v);
	});
	canvas.addEventListener("dblclick", function (ev) {
		var v = flameHit(F, ev);
		if (v >= 0)
			flameOpenSource(F, v);
	});
	canvas.addEventListener("focus", F.draw);
	canvas.addEventListener("blur", F.draw);
	canvas.addEventListener("keydown", function (ev) {
		flameKey(F, ev);
	});
}
