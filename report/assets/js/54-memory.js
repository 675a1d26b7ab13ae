// SPDX-License-Identifier: MIT
// Memory: per process, badges (highest RSS, largest accumulated change on one line) and an RSS
// timeline you can inspect by mouse or keyboard; then the growth ranking of lines. Processes are
// never summed: each keeps its own badges and timeline.

VIEWS.memory = {label: "Memory", icon: "\u25a6", when: hasMemory, render: renderMemory};

var SVGNS = "http://www.w3.org/2000/svg";

function svg(tag, attrs) {
	var n = document.createElementNS(SVGNS, tag);
	for (var k in attrs || {})
		n.setAttribute(k, attrs[k]);
	return n;
}

function selOf(p) {
	var m = selCache.get(p);
	if (!m) {
		m = buildSel(p);
		selCache.set(p, m);
	}
	return m;
}

function renderMemory(root, r) {
	var ctl = pageView(root), m = sel(), cleanups = [];
	root.appendChild(viewHead("Memory", "When did process RAM grow, and which line was active?",
				  helpLink("memory", {class: "more"}, "About memory \u2197")));
	var procs = D.memory ? list(D.memory.procs).filter(function (mp) {
		return mp && inSel(mp.proc);
	}) : [];
	if (!procs.length)
		root.appendChild(el("p", {class: "notice"}, SEL !== -1
			? "No RSS timeline was recorded for " + (SEL >= 0 ? "this process." : selName(SEL) + ".")
			: "No RSS timeline was recorded; the line measurements below come from the source tables."));
	procs.forEach(function (mp) {
		var pm = selOf(mp.proc), best = -1;
		for (var i = 0; pm.mem_change && i < pm.n; i++)
			if (pm.mem_change[i] === pm.mem_change[i] && (best < 0 || pm.mem_change[i] > pm.mem_change[best]))
				best = i;
		var sec = el("section", {class: "memproc", "data-proc": mp.proc});
		sec.appendChild(el("div", {class: "sechead"},
				   el("h2", null, procShort(mp.proc), el("span", {class: "sub mono"},
									 " " + ((D.processes[mp.proc] || {}).argv || "")))));
		var peak = isNum(mp.peak) ? mp.peak : maxOf(mp.rss);
		var badges = el("div", {class: "cards two"});
		badges.appendChild(card("Peak memory", fmtBytes(peak), "highest observed RSS", "mem"));
		badges.appendChild(card("Largest line change",
					best >= 0 ? fmtBytes(pm.mem_change[best], true) : DASH,
					best >= 0 ? srcLink(pm.src[best], pm.line[best]) : "no line change recorded", "mem"));
		sec.appendChild(badges);
		if (mp.merged)
			sec.appendChild(el("p", {class: "notice"}, "Readings were merged: " +
					   (isNum(mp.readings) ? fmtCount(mp.readings) + " readings were compressed into " : "the readings were compressed into ") +
					   fmtCount(list(mp.t).length) + " points, keeping each interval's peak and trough " +
					   "and the first and last reading."));
		var chart = memChart(mp);
		sec.appendChild(chart.el);
		root.appendChild(sec);
		cleanups.push(chart);
		chart.draw();
	});

	// growth ranking of lines in the current selection
	var rows = [];
	for (var i = 0; m.mem_change && i < m.n; i++)
		if (m.mem_change[i] === m.mem_change[i])
			rows.push(i);
	root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Largest accumulated memory growth"),
			    el("span", {class: "sub"}, fmtCount(rows.length) + " lines")));
	var g = lineGetters(m), gs = g.src, gl = g.line, loc = colLocFor(rows, gs, gl);
	var t = new Table({
		columns: [colBytes("memchange", "Mem Change", function (x) {
			return m.mem_change[x];
		}, true), colBytes("peakmem", "Peak Mem", function (x) {
			return m.peak_mem ? m.peak_mem[x] : NaN;
		}), loc, colCode(gs, gl)],
		rows: rows, sort: {id: "memchange", dir: -1}, cls: "index memrank", minW: sourceMinW(rows, gs, gl),
		empty: "No line has a memory measurement in this selection.",
	});
	t.root.classList.add("bounded");
	root.appendChild(t.root);
	t.draw(true);
	watchScroll(root);
	ctl.destroy = function () {
		cleanups.forEach(function (c) {
			c.destroy();
		});
	};
	return ctl;
}

function maxOf(a) {
	var v = NaN;
	list(a).forEach(function (x) {
		if (isNum(x) && !(x <= v))
			v = x;
	});
	return v;
}

// Rounds a raw step up to 1, 2, 2.5 or 5 times a power of ten.
function niceStep(raw) {
	if (!(raw > 0))
		return 1;
	var p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
}

// An RSS timeline: line and area with gaps for missing readings; hover, arrow keys, Enter.
// The chart's grid: RSS labels every ystep up to ymax, time labels and ticks along the bottom.
function memAxes(s, geo, ymax, ystep) {
	var x = geo.x, y = geo.y;
	for (var v = 0; v <= ymax + ystep / 2; v += ystep) {
		s.appendChild(svg("line", {x1: geo.pl, x2: geo.W - geo.pr, y1: y(v), y2: y(v), class: "grid"}));
		var lab = svg("text", {x: geo.pl - 8, y: y(v) + 4, "text-anchor": "end", class: "ylab"});
		lab.textContent = fmtBytes(v);
		s.appendChild(lab);
	}
	var xstep = niceStep((geo.t1 - geo.t0) / 6), H = geo.H;
	for (var tt = Math.ceil(geo.t0 / xstep) * xstep; tt <= geo.t1 + 1e-9; tt += xstep) {
		var xl = svg("text", {x: x(tt), y: H - 10, "text-anchor": "middle", class: "xlab"});
		xl.textContent = fmtTime(Math.abs(tt) < 1e-12 ? 0 : tt);
		s.appendChild(xl);
		s.appendChild(svg("line", {x1: x(tt), x2: x(tt), y1: H - geo.pb, y2: H - geo.pb + 4, class: "tick"}));
	}
}

// The RSS line and the area under it: one path per run of consecutive readings, so that a
// missing reading leaves a gap.
function memPaths(T, R, x, y) {
	var line = "", area = "", run = [];
	function pt(k) {
		return x(T[k]).toFixed(1) + " " + y(R[k]).toFixed(1);
	}
	function flush() {
		if (!run.length)
			return;
		line += "M" + run.map(pt).join("L");
		area += "M" + x(T[run[0]]).toFixed(1) + " " + y(0).toFixed(1) + "L" + run.map(pt).join("L") +
			"L" + x(T[run[run.length - 1]]).toFixed(1) + " " + y(0).toFixed(1) + "Z";
		run = [];
	}
	for (var k = 0; k < T.length; k++) {
		if (isNum(T[k]) && isNum(R[k]))
			run.push(k);
		else
			flush();
	}
	flush();
	return {line: line, area: area};
}

// Index into valid (readings in time order) of the reading nearest to time t.
function nearestReading(valid, T, t) {
	var lo = 0, hi = valid.length - 1;
	while (lo < hi) {
		var mid = (lo + hi) >> 1;
		if (T[valid[mid]] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && Math.abs(T[valid[lo - 1]] - t) <= Math.abs(T[valid[lo]] - t))
		lo--;
	return lo;
}

function memChart(mp) {
	var T = list(mp.t), R = list(mp.rss), S = list(mp.src), L = list(mp.line);
	var valid = [];
	for (var i = 0; i < T.length; i++)
		if (isNum(T[i]) && isNum(R[i]))
			valid.push(i);
	var wrap = el("div", {class: "chart", tabindex: "0", role: "group",
			      "aria-label": "RSS timeline of " + procShort(mp.proc) +
					    ". Use the arrow keys to step through readings and Enter to open the linked source."});
	var tip = el("div", {class: "tip", hidden: true});
	var host = el("div", {class: "plot"});
	wrap.appendChild(el("div", {class: "charthead"}, el("h3", null, "Memory usage"),
			    el("span", {class: "sub"}, "RSS (resident memory) \u00b7 " + fmtCount(valid.length) + " readings")));
	wrap.appendChild(host);
	wrap.appendChild(el("div", {class: "axisname"}, "Elapsed time"));
	var cur = -1, geo = null, ro = null;

	function draw() {
		clear(host);
		var W = Math.max(320, host.clientWidth || 800), H = 250, pl = 78, pr = 18, pt = 12, pb = 30;
		var t0 = Infinity, t1 = -Infinity, top = 0;
		valid.forEach(function (k) {
			t0 = Math.min(t0, T[k]);
			t1 = Math.max(t1, T[k]);
			top = Math.max(top, R[k]);
		});
		if (!valid.length) {
			host.appendChild(el("p", {class: "muted"}, "No readings."));
			return;
		}
		if (t1 <= t0)
			t1 = t0 + 1;
		var ystep = niceStep(top / 4 || 1), ymax = Math.max(ystep, Math.ceil(top / ystep) * ystep);
		var x = function (t) {
			return pl + (t - t0) / (t1 - t0) * (W - pl - pr);
		}, y = function (v) {
			return pt + (1 - v / ymax) * (H - pt - pb);
		};
		geo = {x: x, y: y, W: W, H: H, pl: pl, pr: pr, pt: pt, pb: pb, t0: t0, t1: t1};
		var s = svg("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, class: "memsvg", "aria-hidden": "true"});
		memAxes(s, geo, ymax, ystep);
		var p = memPaths(T, R, x, y);
		s.appendChild(svg("path", {d: p.area, class: "area"}));
		s.appendChild(svg("path", {d: p.line, class: "line"}));
		geo.guide = svg("line", {x1: 0, x2: 0, y1: pt, y2: H - pb, class: "guide", visibility: "hidden"});
		geo.dot = svg("circle", {r: 4, class: "dot", visibility: "hidden"});
		s.appendChild(geo.guide);
		s.appendChild(geo.dot);
		host.appendChild(s);
		host.appendChild(tip);
		if (cur >= 0)
			show(cur);
	}

	function show(k) {
		cur = k;
		if (!geo || k < 0)
			return;
		var gx = geo.x(T[k]), gy = geo.y(R[k]);
		geo.guide.setAttribute("x1", gx);
		geo.guide.setAttribute("x2", gx);
		geo.guide.setAttribute("visibility", "visible");
		geo.dot.setAttribute("cx", gx);
		geo.dot.setAttribute("cy", gy);
		geo.dot.setAttribute("visibility", "visible");
		clear(tip);
		tip.appendChild(el("div", {class: "tt"}, fmtTime(T[k])));
		tip.appendChild(el("div", {class: "tv"}, fmtBytes(R[k])));
		tip.appendChild(isNum(S[k]) && D.sources[S[k]]
					? el("div", null, srcLink(S[k], L[k]))
					: el("div", {class: "muted small"}, "no project line active"));
		tip.hidden = false;
		var left = gx + 14;
		if (left + 200 > geo.W)
			left = gx - 14 - Math.max(tip.offsetWidth, 140);
		tip.style.left = left + "px";
		tip.style.top = Math.max(4, gy - 30) + "px";
		wrap.setAttribute("data-reading", k);
	}

	function hide() {
		if (document.activeElement === wrap)
			return;
		tip.hidden = true;
		if (geo) {
			geo.guide.setAttribute("visibility", "hidden");
			geo.dot.setAttribute("visibility", "hidden");
		}
	}

	host.addEventListener("mousemove", function (e) {
		// over the tooltip itself the reading stays put, so that its source link can be clicked
		if (!geo || !valid.length || tip.contains(e.target))
			return;
		var rect = host.getBoundingClientRect(), px = e.clientX - rect.left;
		var t = geo.t0 + (px - geo.pl) / (geo.W - geo.pl - geo.pr) * (geo.t1 - geo.t0);
		show(valid[nearestReading(valid, T, t)]);
	});
	host.addEventListener("mouseleave", hide);
	wrap.addEventListener("blur", function () {
		tip.hidden = true;
		hide();
	});
	wrap.addEventListener("focus", function () {
		if (cur < 0 && valid.length)
			show(valid[0]);
		else if (cur >= 0)
			show(cur);
	});
	wrap.addEventListener("keydown", function (e) {
		if (!valid.length)
			return;
		var pos = cur >= 0 ? valid.indexOf(cur) : -1;
		if (e.key === "ArrowRight" || e.key === "ArrowUp")
			pos = Math.min(valid.length - 1, pos + 1);
		else if (e.key === "ArrowLeft" || e.key === "ArrowDown")
			pos = Math.max(0, pos - 1);
		else if (e.key === "Home")
			pos = 0;
		else if (e.key === "End")
			pos = valid.length - 1;
		else if (e.key === "Enter") {
			if (cur >= 0 && isNum(S[cur]) && D.sources[S[cur]]) {
				saveScroll();
				location.hash = srcHref(S[cur], L[cur]);
			}
			e.preventDefault();
			return;
		} else {
			return;
		}
		e.preventDefault();
		show(valid[Math.max(0, pos)]);
	});
	if (window.ResizeObserver) {
		var lastW = 0;
		ro = new ResizeObserver(function () {
			var w = host.clientWidth;
			if (Math.abs(w - lastW) > 2) {
				lastW = w;
				draw();
			}
		});
		ro.observe(host);
	}
	return {el: wrap, draw: draw, destroy: function () {
		if (ro)
			ro.disconnect();
	}};
}
