// SPDX-License-Identifier: MIT
// Files (Python files, notebooks, child invocations) and Functions: index tables that start with
// the highest time and offer a Time heatmap (off by default).

VIEWS.files = {label: "Files", icon: "\u25a4", render: renderFiles};
VIEWS.functions = {label: "Functions", icon: "\u0192", render: renderFunctions};

// A view whose table scrolls inside the window (headings and controls stay in place).
function fittedView(root, tableFn) {
	root.className = "content fitted";
	return {
		state: function () {
			var t = tableFn();
			return t ? {top: t.root.scrollTop, left: t.root.scrollLeft} : {};
		},
		restore: function (st) {
			var t = tableFn();
			if (!t)
				return;
			t.root.scrollTop = st.top || 0;
			t.root.scrollLeft = st.left || 0;
			t.draw(true);
		},
	};
}

var TIME_HEAT = [{value: "none", label: "None"}, {value: "time", label: "Time"}];

function renderFiles(root, r) {
	var t = null, ct = null, ctl = fittedView(root, function () {
		return t;
	});
	var m = sel(), rows = [], maxT = 0;
	for (var s = 0; s < D.sources.length; s++) {
		if (!isBrowsable(s))
			continue;
		rows.push(s);
		if (m.srcTime[s] > maxT)
			maxT = m.srcTime[s];
	}
	UI.heat.files = UI.heat.files || "none";
	var cols = [
		colTime("time", "Time", function (s) {
			return m.srcTime[s];
		}, "Sum of the own time of the file's lines"),
		{id: "loc", label: "Location", kind: "loc", w: 0, cls: "locc", value: function (s) {
			return SRC_RANK[s];
		}, cell: function (td, s) {
			td.appendChild(el("a", {class: "loc", href: srcHref(s), title: D.sources[s].path || ""},
					  D.sources[s].name));
		}},
	];
	var w = 12;
	rows.forEach(function (s) {
		w = Math.max(w, D.sources[s].name.length);
	});
	cols[1].w = Math.min(420, Math.ceil(w * METRIC.num + 30));
	if (m.has.samples)
		cols.push(colCount("samples", "Samples", function (s) {
			return m.srcSamples[s];
		}));
	if (m.has.hits)
		cols.push(colCount("hits", "Hits", function (s) {
			return m.srcHits[s];
		}));
	cols.push({id: "kind", label: "Kind", kind: "name", w: 110, value: function (s) {
		return D.sources[s].kind;
	}, cell: function (td, s) {
		td.textContent = D.sources[s].kind === "notebook" ? "Notebook" : "Python";
	}});
	cols.push(colCount("lines", "Lines", function (s) {
		return srcLineCount(s);
	}));
	if (D.diff)
		cols.splice.apply(cols, [1, 0].concat(diffColumns(diffFile)));
	var locW = cols[D.diff ? 3 : 1].w;
	cols[D.diff ? 3 : 1].w = undefined; // Location takes the remaining width
	t = new Table({columns: cols, rows: rows, sort: {id: D.diff ? "dtime" : "time", dir: -1}, fill: true, cls: "index files",
		       minW: locW, empty: "No Python source was captured.",
		       heat: function (s) {
			       return UI.heat.files === "time" ? heatLevel(m.srcTime[s], maxT) : 0;
		       }});
	root.appendChild(viewHead("Files", fmtCount(rows.length) + " source snapshots" +
						   (D.children.length ? ", " + D.children.length + " child invocations" : ""),
				  heatSwitch("files", TIME_HEAT, function () {
					  t.refresh(false);
				  })));
	t.root.classList.add("shrink");
	var body = el("div", {class: "stack"}, t.root);
	if (D.children.length) {
		ct = childTable();
		body.appendChild(el("section", {class: "children"},
				    el("div", {class: "sechead"}, el("h2", null, "Child invocations"),
				       helpLink("child-invocations", {class: "more"}, "About child runs \u2197")),
				    ct.root));
	}
	root.appendChild(body);
	t.draw(true);
	if (ct)
		ct.draw(true);
	watchScroll(t.root);
	return ctl;
}

function childStatus(c) {
	return c.status || (c.exit && c.exit !== "exit 0" ? "Failed" : "Success");
}

function childTable() {
	var C = D.children, rows = [];
	for (var i = 0; i < C.length; i++)
		if (C[i] && (inSel(C[i].parent_proc) || inSel(C[i].proc)))
			rows.push(i);
	var cols = [
		colTime("wait", "Wait", function (i) {
			return C[i].wait_s;
		}, "Time the parent line waited for this child"),
		colLoc(function (i) {
			return C[i].src;
		}, function (i) {
			return C[i].line;
		}, "Location"),
		{id: "cmd", label: "Command", kind: "name", w: 300, value: function (i) {
			return C[i].cmd;
		}, cell: function (td, i) {
			td.appendChild(el("a", {href: href("child/" + i), class: "mono"}, C[i].cmd || "(child " + i + ")"));
		}},
		colPid(function (i) {
			return childPid(C[i]);
		}),
		{id: "kind", label: "Kind", kind: "name", w: 100, value: function (i) {
			return C[i].kind;
		}, cell: function (td, i) {
			td.textContent = C[i].kind === "notebook" ? "Notebook" : "Process";
		}},
		colTime("duration", "Duration", function (i) {
			return C[i].duration_s;
		}),
		{id: "status", label: "Status", kind: "name", value: function (i) {
			return childStatus(C[i]) + " " + (C[i].exit || "");
		}, cell: function (td, i) {
			var st = childStatus(C[i]);
			td.appendChild(el("span", {class: "badge " + st.toLowerCase()}, st));
			if (C[i].exit)
				td.appendChild(el("span", {class: "sub"}, " " + C[i].exit));
		}},
	];
	cols[1].w = 200;
	return new Table({columns: cols, rows: rows, sort: {id: "wait", dir: -1}, cls: "index kids", minW: 160,
			  empty: "No child invocation in this selection."});
}

function renderFunctions(root, r) {
	var t = null, ctl = fittedView(root, function () {
		return t;
	});
	var m = sel(), F = fnOf(m), rows = [];
	for (var i = 0; i < F.n; i++)
		rows.push(i);
	var FT = UI.mode === "total" && F.total_s ? F.total_s : F.time_s;
	var maxT = UI.mode === "total" && F.total_s ? F.maxTotal : F.maxTime;
	UI.heat.functions = UI.heat.functions || "none";
	var gs = function (f) {
		return F.src[f];
	}, gl = function (f) {
		return F.def_line[f];
	};
	var loc = colLocFor(rows, gs, gl, "Location");
	var cols = [colTime("time", timeLabel(), function (f) {
		return FT ? FT[f] : NaN;
	}, "Own time: the function's own lines, excluding other project functions it calls"), loc];
	if (D.diff)
		cols.splice.apply(cols, [1, 0].concat(diffColumns(function (f) {
			return diffFunc(F.src[f], F.name[f]);
		})));
	if (F.has.samples)
		cols.push(colCount("samples", "Samples", function (f) {
			return F.samples[f];
		}));
	if (F.has.calls)
		cols.push(colCount("calls", "Calls", function (f) {
			return F.calls[f];
		}));
	var nameW = 10;
	for (i = 0; i < rows.length && i < 5000; i++)
		nameW = Math.max(nameW, F.name[i].length);
	cols.push({id: "source", label: "Source", kind: "name", w: Math.min(480, Math.ceil(nameW * METRIC.ch + 28)),
		   title: "Function name", cls: "fnc",
		   value: function (f) {
			   return F.name[f];
		   }, cell: function (td, f) {
			   td.appendChild(el("a", {class: "fnname", href: srcHref(F.src[f], F.def_line[f])}, F.name[f]));
		   }});
	cols.push(colCount("lines", "Lines", function (f) {
		return F.lines[f];
	}, "Lines from the def statement through the last statement of the body"));
	var nameCol = cols[cols.length - 2], nameMin = nameCol.w;
	nameCol.w = undefined; // the function name takes the remaining width
	t = new Table({columns: cols, rows: rows, sort: {id: D.diff ? "dtime" : "time", dir: -1}, fill: true, cls: "index funcs",
		       minW: nameMin, empty: "No function was recorded in this selection.",
		       heat: function (f) {
			       return UI.heat.functions === "time" && FT ? heatLevel(FT[f], maxT) : 0;
		       }});
	root.appendChild(viewHead("Functions", fmtCount(rows.length) + " functions",
				  [modeSwitch(render), heatSwitch("functions", TIME_HEAT, function () {
					  t.refresh(false);
				  })]));
	t.root.classList.add("shrink");
	root.appendChild(t.root);
	t.draw(true);
	watchScroll(t.root);
	return ctl;
}
