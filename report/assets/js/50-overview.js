// SPDX-License-Identifier: MIT
// Overview: where to start (the hottest line and function), run totals, the hot lines, and
// every process with its Python build or the reason it has no lines.

VIEWS.overview = {label: "Overview", icon: "\u25c8", render: renderOverview};

// A page-like view scrolls the main area as a whole.
function pageView(root) {
	root.className = "content page";
	return {
		state: function () {
			return {top: root.scrollTop};
		},
		restore: function (st) {
			root.scrollTop = st.top || 0;
		},
	};
}

// The k rows with the highest value of arr (NaN and zero skipped), highest first.
function topRows(m, arr, k) {
	var out = [];
	if (!arr)
		return out;
	for (var i = 0; i < m.n; i++) {
		var v = arr[i];
		if (!(v > 0))
			continue;
		if (out.length < k)
			out.push(i);
		else if (v > arr[out[k - 1]])
			out[k - 1] = i;
		else
			continue;
		for (var j = out.length - 1; j > 0 && arr[out[j - 1]] < arr[out[j]]; j--) {
			var x = out[j];
			out[j] = out[j - 1];
			out[j - 1] = x;
		}
	}
	return out;
}

function timeArr(m) {
	return UI.mode === "total" ? m.total_s || m.time_s : m.time_s;
}

function timeLabel() {
	return UI.mode === "total" ? "Total time" : "Time";
}

function sampleArr(m) {
	return UI.mode === "total" ? m.samples_total || m.samples : m.samples;
}

function sumOf(arr) {
	var t = 0, any = false;
	for (var i = 0; arr && i < arr.length; i++)
		if (arr[i] === arr[i]) {
			t += arr[i];
			any = true;
		}
	return any ? t : NaN;
}

// Columns of a table of lines (rows of the selection model): Time, Location, Samples, Source.
function lineIndexColumns(m, rows) {
	var T = timeArr(m), S = sampleArr(m);
	var g = lineGetters(m), gs = g.src, gl = g.line;
	var cols = [colTime("time", timeLabel(), function (r) {
		return T ? T[r] : NaN;
	})];
	cols.push(colLocFor(rows, gs, gl));
	if (m.has.samples)
		cols.push(colCount("samples", UI.mode === "total" ? "Total samples" : "Samples", function (r) {
			return S[r];
		}));
	if (m.has.hits)
		cols.push(colCount("hits", "Hits", function (r) {
			return m.hits[r];
		}));
	cols.push(colCode(gs, gl));
	return cols;
}

function renderOverview(root, r) {
	var ctl = pageView(root), m = sel(), run = D.run;
	var T = timeArr(m);
	root.appendChild(viewHead("Overview", "Where should I start? Follow the time from a hot line to its function.",
				  modeSwitch(render)));
	root.appendChild(el("p", {class: "notice embed"},
			    el("strong", null, "This report embeds source code. "),
			    "Captured source, file paths and command lines are stored in this file; escaping keeps " +
			    "them from running, but review them before sharing. ",
			    helpLink("sharing", null, "Sharing \u2197")));

	var hot = topRows(m, T, 25);
	root.appendChild(startHere(m, hot, T));

	var browsable = 0;
	for (var s = 0; s < D.sources.length; s++)
		if (isBrowsable(s))
			browsable++;
	var cards = el("div", {class: "cards"});
	cards.appendChild(card("Elapsed wall time", fmtTime(run.elapsed_s)));
	// a selection's own samples and processes, with the run's beside them
	var mine = D.processes.filter(function (p, i) {
		return p && inSel(i);
	});
	var selSamples = mine.reduce(function (a, p) {
		return isNum(p.samples) && isNum(a) ? a + p.samples : NaN;
	}, 0);
	if (SEL !== -1 && (run.capabilities.samples !== false || isNum(run.samples)))
		cards.appendChild(card("Samples", fmtCount(selSamples), "of " + fmtCount(run.samples) + " in the run"));
	else if (run.capabilities.samples !== false || isNum(run.samples))
		cards.appendChild(card("Samples", fmtCount(run.samples),
				       "main process: " + fmtRate(run.samples_per_s)));
	if (SEL !== -1)
		cards.appendChild(card("Processes", String(mine.length), "of " + D.processes.length + " in the run"));
	else
		cards.appendChild(card("Processes", String(D.processes.length),
				       isNum(run.threads) ? fmtCount(run.threads) + " threads observed" : null));
	cards.appendChild(card("Source snapshots", fmtCount(browsable)));
	cards.appendChild(card("Functions", fmtCount(fnOf(m).n)));
	cards.appendChild(card("Measured lines", fmtCount(m.n),
			       isNum(m.sumTime) ? fmtTime(m.sumTime) + " attributed" : null));
	if (hasSpark()) {
		// the Spark view's count: the selection's actions, linked to the view
		var acts = list(D.spark.actions).filter(function (a) {
			return a && sparkInSel(a);
		});
		cards.appendChild(card("Spark actions", el("a", {href: href("spark")}, fmtCount(acts.length)),
				       list(D.spark.applications).length + " application" +
				       (list(D.spark.applications).length === 1 ? "" : "s")));
	}
	var lost = run.lost || {};
	if (lost.total > 0)
		cards.appendChild(card("Lost samples", fmtCount(lost.total), lostDetail(lost), "warn"));
	root.appendChild(cards);
	if (D.diff)
		root.appendChild(diffSection());

	UI.heat.hot = UI.heat.hot || "none";
	var maxT = UI.mode === "total" ? m.maxTotal || m.maxTime : m.maxTime;
	var t = null, g = lineGetters(m);
	root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Most expensive lines"),
			    el("div", {class: "vtools"}, el("a", {href: href("files"), class: "more"}, "Explore all sources \u2192"),
			       heatSwitch("hot", TIME_HEAT, function () {
				       t.refresh(false);
			       }))));
	t = new Table({columns: lineIndexColumns(m, hot), rows: hot, sort: {id: "time", dir: -1},
			   heat: function (x) {
				   return UI.heat.hot === "time" && T ? heatLevel(T[x], maxT) : 0;
			   },
			   minW: sourceMinW(hot, g.src, g.line),
			   cls: "index hot", empty: "No line has a measured time in this selection."});
	root.appendChild(t.root);
	t.draw(true);

	var ranks = SEL === -1 ? rankSection() : null;
	if (ranks)
		root.appendChild(ranks);

	root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Processes"),
			    helpLink("processes", {class: "more"}, "About processes \u2197")));
	var pt = processTable();
	root.appendChild(pt.root);
	pt.draw(true);

	var notes = run.notes.slice();
	if (notes.length) {
		root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Notes")));
		root.appendChild(el("ul", {class: "notes"}, notes.map(function (n) {
			return el("li", null, String(n));
		})));
	}
	watchScroll(root);
	return ctl;
}

function lostDetail(lost) {
	var parts = [];
	[["ringbuf", "ring buffer full"], ["unresolved", "interpreter not known yet"]].forEach(function (k) {
		if (lost[k[0]] > 0)
			parts.push(fmtCount(lost[k[0]]) + " " + k[1]);
	});
	return parts.join(", ");
}

function startHere(m, hot, T) {
	var box = el("section", {class: "start", "aria-label": "Where should I start?"});
	box.appendChild(el("h2", null, "Where should I start?"));
	if (!hot.length) {
		box.appendChild(el("p", {class: "muted"},
				   SEL >= 0 && D.processes[SEL] && D.processes[SEL].note
					   ? "This process has no source lines: " + D.processes[SEL].note + "."
					   : "No line has a measured time in this selection."));
		return box;
	}
	var top = hot[0], total = T === m.time_s ? m.sumTime : sumOf(T), s = m.src[top], line = m.line[top];
	var code = el("code", {class: "excerpt"});
	codeCell(code, s, line, false, true);
	box.appendChild(el("p", null, "Start at ", srcLink(s, line), ": ", el("strong", null, fmtTime(T[top])),
			   isNum(total) && total > 0 ? " (" + fmtPct(T[top] / total) + " of the attributed time)" : "",
			   code));
	var f = functionAt(s, line);
	if (f)
		box.appendChild(el("p", null, "It is in ", el("a", {class: "fnname", href: srcHref(s, f.def)}, f.name),
				   ", defined at ", srcLink(s, f.def), "."));
	var F = fnOf(m), best = -1, FT = UI.mode === "total" ? F.total_s || F.time_s : F.time_s;
	for (var i = 0; FT && i < F.n; i++)
		if (FT[i] > 0 && (best < 0 || FT[i] > FT[best]))
			best = i;
	if (best >= 0)
		box.appendChild(el("p", null, "The function with the most ", UI.mode === "total" ? "inclusive" : "own",
				   " time is ", el("a", {class: "fnname", href: srcHref(F.src[best], F.def_line[best])},
						   F.name[best]),
				   " (", fmtTime(FT[best]), "). ",
				   el("a", {href: href("functions")}, "All functions \u2192")));
	return box;
}

function processTable() {
	var P = D.processes, rows = P.map(function (p, i) {
		return i;
	});
	function pv(k) {
		return function (i) {
			return P[i] ? P[i][k] : null;
		};
	}
	var cols = [
		{id: "pid", label: "PID", kind: "num", num: true, first: 1, w: numW(11, "PID"), value: pv("pid"),
		 title: "Process id (and the id inside its pid namespace, when different)",
		 cell: function (td, i) {
			 td.appendChild(el("a", {href: "#overview?p=" + i, title: "Show only this process",
						 class: SEL !== -1 && inSel(i) ? "selected" : null}, String(P[i].pid)));
			 if (isNum(P[i].nspid) && P[i].nspid !== P[i].pid)
				 td.appendChild(el("span", {class: "sub", title: "pid inside its namespace"}, " (" + P[i].nspid + ")"));
		 }},
		colPid(pv("ppid"), "ppid", "PPID"),
	];
	if (multiHost())
		cols.push({id: "host", label: "Host", kind: "name", w: 140, value: pv("host"), cell: function (td, i) {
			td.textContent = P[i].host || DASH;
		}});
	if (P.some(function (p) {
		return p && isNum(p.rank);
	}))
		cols.push(colCount("rank", "Rank", pv("rank"), "RANK in its distributed job", 6));
	cols = cols.concat([
		{id: "cmd", label: "Command", kind: "name", w: 300, value: function (i) {
			return P[i].argv || P[i].comm;
		}, cell: function (td, i) {
			td.classList.add("mono");
			td.textContent = P[i].argv || P[i].comm || DASH;
			td.title = P[i].argv || "";
		}},
		{id: "python", label: "Python", kind: "name", w: 190, value: pv("python"), cell: function (td, i) {
			setNum(td, P[i].python || "not Python", !!P[i].python);
		}},
		colCount("threads", "Threads", pv("threads")),
		colCount("psamples", "Samples", pv("samples")),
		colCount("native", "Native samples", pv("native_samples"), "Samples without a Python frame"),
		colTime("pstart", "Start", pv("start_s"), "Start, relative to the start of the run"),
		colTime("pdur", "Duration", function (i) {
			return isNum(P[i].end_s) && isNum(P[i].start_s) ? P[i].end_s - P[i].start_s : null;
		}),
		{id: "exit", label: "Exit", kind: "name", w: 110, value: pv("exit"), cell: function (td, i) {
			setNum(td, P[i].exit || DASH, !!P[i].exit);
			if (P[i].exit && P[i].exit !== "exit 0")
				td.classList.add("bad");
		}},
		{id: "parent", label: "Started at", kind: "loc", w: 170, value: function (i) {
			var pa = P[i].parent;
			return pa && isNum(pa.src) ? locKey(pa.src, pa.line) : null;
		}, cell: function (td, i) {
			var pa = P[i].parent;
			if (pa && isNum(pa.src))
				td.appendChild(srcLink(pa.src, pa.line));
			else
				setNum(td, DASH, false);
		}},
		{id: "note", label: "Note", kind: "name", value: pv("note"), cell: function (td, i) {
			setNum(td, P[i].note || "", true);
		}},
	]);
	return new Table({columns: cols, rows: rows, sort: {id: "pid", dir: 1}, cls: "index procs",
			  rowInit: function (tr, i) {
				  if (SEL !== -1 && inSel(i))
					  tr.classList.add("selected");
			  }});
}
