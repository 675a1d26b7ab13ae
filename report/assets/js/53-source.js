// SPDX-License-Identifier: MIT
// The source view of one file or notebook: every line with its measurements, highlighted code,
// symbol links, callers/callees, permalinks and child-run context. The title block stays put and
// the table scrolls in the remaining space (drawing only the rows in view).

VIEWS.source = {label: "Source", hidden: true, render: renderSource};

UI.sort = {}; // sort per table kind, kept while navigating between files

function renderSource(root, r) {
	root.className = "content fitted source";
	var s = Number(r.a), src = D.sources[s];
	if (!(s >= 0) || !src) {
		root.appendChild(viewHead("Source not found", "This report has no source #" + r.a + "."));
		return {};
	}
	var v = sourceLines(s, src, sel());
	var cols = sourceColumns(v);
	var heatOpts = sourceHeatOptions(v.m);
	var t = sourceTable(v, cols, sourceSort(s, cols));
	var hot = sourceHead(root, v, t, heatOpts);
	root.appendChild(t.root);
	t.draw(true);
	watchScroll(t.root);
	return sourceViewHooks(t, hot);
}

// What the source view of source s shows, in selection m: its rows (line numbers), each line's
// row of m, the notebook cell of each line, and the measurements of a line (val).
function sourceLines(s, src, m) {
	var lines = srcLines(s), S0 = m.srcStart[s], S1 = m.srcStart[s + 1], k, rr;
	var nl = srcLineCount(s);
	for (k = S0; k < S1; k++)
		nl = Math.max(nl, m.line[m.srcRows[k]]);
	var rowOf = new Int32Array(nl + 1).fill(-1);
	for (k = S0; k < S1; k++) {
		rr = m.srcRows[k];
		rowOf[m.line[rr]] = rr;
	}
	function present(col) {
		var a = m[col];
		if (!a)
			return false;
		for (var i = S0; i < S1; i++)
			if (a[m.srcRows[i]] === a[m.srcRows[i]])
				return true;
		return false;
	}
	// A measurement of a line; lines without a row have 0 counts (observed zero times) and an
	// unknown time.
	function val(arr, line, zero) {
		if (!arr)
			return NaN;
		var x = rowOf[line];
		if (x < 0)
			return zero ? 0 : NaN;
		return arr[x];
	}
	var T = timeArr(m), SM = sampleArr(m);
	var ctxKeys = m.ctxSrcs.has(s);
	var cells = src.cells;

	// group (cell) of every line, for notebooks
	var groupOf = null;
	if (cells) {
		groupOf = new Int32Array(nl + 1).fill(cells.length);
		cells.forEach(function (c, gi) {
			for (var x = c.first; x < c.first + c.nlines && x <= nl; x++)
				groupOf[x] = gi;
		});
	}

	// Every line of the captured text; without text, only the lines that have measurements.
	var hasText = typeof src.text === "string", rows;
	if (hasText) {
		rows = new Int32Array(nl);
		for (k = 0; k < nl; k++)
			rows[k] = k + 1;
	} else {
		rows = [];
		for (k = 1; k <= nl; k++)
			if (rowOf[k] >= 0)
				rows.push(k);
	}
	return {s: s, src: src, m: m, lines: lines, nl: nl, rowOf: rowOf, present: present, val: val,
		T: T, SM: SM, ctxKeys: ctxKeys, cells: cells, groupOf: groupOf, hasText: hasText,
		rows: rows};
}

// The columns of the source table: line number, the measurements the selection has, context
// and the code.
function sourceColumns(v) {
	var m = v.m, s = v.s, val = v.val, present = v.present, T = v.T, SM = v.SM;
	var cols = [];
	var digits = String(v.nl).length;
	cols.push({id: "ln", label: "", kind: "none", cls: "ln", w: numW(digits) + 22, aria: "Line",
		   value: null, cell: function (td, line) {
			   lineNumberCell(td, m, s, line);
		   }});
	cols.push(colTime("time", timeLabel(), function (line) {
		return val(T, line);
	}, UI.mode === "total" ? "Inclusive time: the line anywhere on the stack" :
				 "Time attributed to the line; estimated by sampling"));
	if (D.diff)
		cols.push.apply(cols, diffColumns(function (line) {
			return diffLine(s, line);
		}));
	if (present("cpu_s"))
		cols.push(colTime("cpu", "CPU", function (line) {
			return val(m.cpu_s, line);
		}, "On-CPU part of the line's wall time"));
	if (present("wait_s"))
		cols.push(colTime("wait", "Wait", function (line) {
			return val(m.wait_s, line);
		}, "Off-CPU part of the line's wall time (I/O, sleeps, locks)"));
	if (present("gil_wait_s"))
		cols.push(colTime("gil", "GIL wait", function (line) {
			return val(m.gil_wait_s, line);
		}, "Time spent waiting for the GIL"));
	if (present("runq_s"))
		cols.push(colTime("runq", "CPU wait", function (line) {
			return val(m.runq_s, line);
		}, "Runnable but preempted: waiting for a CPU (other load on the machine)"));
	if (present("python_s") || present("native_s") || present("kernel_s"))
		cols.push(splitColumn(m, val));
	if (present("samples"))
		cols.push(colCount("samples", UI.mode === "total" ? "Total samples" : "Samples", function (line) {
			return val(SM, line, true);
		}, "Observations of the line (innermost project frame)"));
	if (present("hits")) {
		cols.push(colCount("hits", "Hits", function (line) {
			return val(m.hits, line, true);
		}, "Recorded executions"));
		if (present("avg_hit_s"))
			cols.push(colTime("avg", "Avg / hit", function (line) {
				return val(m.avg_hit_s, line);
			}, "Time divided by hits"));
	}
	if (present("mem_change"))
		cols.push(colBytes("memchange", "Mem Change", function (line) {
			return val(m.mem_change, line);
		}, true, "Accumulated process-memory change during this line's intervals"));
	if (present("peak_mem"))
		cols.push(colBytes("peakmem", "Peak Mem", function (line) {
			return val(m.peak_mem, line);
		}, false, "Highest observed process memory during this line"));
	if (present("gpu_s"))
		cols.push(colTime("gpu", "GPU time", function (line) {
			return val(m.gpu_s, line);
		}, "Sampled device work, separate from wall time"));
	if (present("gpu_peak_mem"))
		cols.push(colBytes("gpumem", "GPU peak memory", function (line) {
			return val(m.gpu_peak_mem, line);
		}, false, "Highest sampled device memory for the line"));
	if (v.ctxKeys)
		cols.push({id: "context", label: "Context", kind: "num", w: 190, cls: "ctx",
			   title: "Child runs and Spark actions started by the line",
			   value: function (line) {
				   var c = m.ctx.get(s * KEY_LINE + line);
				   return c ? c.length : null;
			   }, cell: function (td, line) {
				   contextCell(td, m, s, line);
			   }});
	cols.push({id: "source", label: "Source", kind: "order", first: 1, cls: "srcc",
		   title: "Sorting by Source restores line order",
		   value: null, cell: function (td, line) {
			   codeCell(td, s, line, true);
		   }});
	return cols;
}

// The heat choices the selection allows; a heat it no longer has falls back to time.
function sourceHeatOptions(m) {
	var memOk = m.has.mem_change && m.maxMem > 0;
	if (!UI.heat.source || (UI.heat.source === "mem" && !memOk))
		UI.heat.source = "time";
	var heatOpts = [{value: "none", label: "None"}, {value: "time", label: "Time"}];
	if (m.has.mem_change)
		heatOpts.push({value: "mem", label: "Mem Growth"});
	return heatOpts;
}

// A source table starts in line order; its sort survives only re-renders of the same source
// (Self/Total, process selection, links within the file).
function sourceSort(s, cols) {
	var sortSt = UI.sortSrc === s ? UI.sort.source : null;
	if (sortSt && !cols.some(function (c) {
		return c.id === sortSt.id;
	}))
		sortSt = null;
	UI.sortSrc = s;
	UI.sort.source = sortSt;
	return sortSt;
}

function sourceTable(v, cols, sortSt) {
	var m = v.m, rowOf = v.rowOf, T = v.T, cells = v.cells, groupOf = v.groupOf;
	var maxT = UI.mode === "total" ? m.maxTotal || m.maxTime : m.maxTime;
	return new Table({
		columns: cols, rows: v.rows, fill: true, cls: "srctable", minW: Math.ceil(maxLineCells(v.s, v.lines) * METRIC.ch + 28),
		sort: sortSt || {id: "source", dir: 1},
		onSort: function (st) {
			UI.sort.source = st;
		},
		groups: cells ? {of: function (line) {
			return groupOf[line];
		}, label: function (g) {
			return g < cells.length ? cellName(cells[g]) : "Outside the captured cells";
		}} : null,
		filter: function (line) {
			return !UI.hotOnly || isHot(m, rowOf[line], T);
		},
		heat: function (line) {
			var x = rowOf[line];
			if (x < 0)
				return 0;
			if (UI.heat.source === "time")
				return T ? heatLevel(T[x], maxT) : 0;
			if (UI.heat.source === "mem")
				return heatLevel(m.mem_change[x], m.maxMem);
			return 0;
		},
		heatKind: UI.heat.source === "mem" ? "mheat" : "heat",
		empty: UI.hotOnly ? "No line of this file has a measurement; switch Hot only off to see them all."
				  : v.hasText ? "This source has no lines." : "No line of this source was measured.",
	});
}

// The title block (name, size, total time, notices) and its tools; returns the Hot only toggle.
function sourceHead(root, v, t, heatOpts) {
	var src = v.src, nl = v.nl, cells = v.cells;
	var total = v.m.srcTime[v.s];
	var sub = [v.hasText ? fmtCount(nl) + (nl === 1 ? " line" : " lines") : "no captured text",
		   cells ? " \u00b7 " + cells.length + " cells" : "",
		   " \u00b7 Total time: ", el("strong", {id: "src-total"}, fmtTime(total))];
	var hot = toggle("Hot only", UI.hotOnly, function (on) {
		UI.hotOnly = on;
		t.o.empty = on ? "No line of this file has a measurement in this selection." : "This source has no lines.";
		t.refresh(true);
	}, "hot-only", "Show only lines with a measurement");
	var head = el("div", {class: "vhead srchead"},
		      el("div", {class: "vtitle"},
			 el("h1", {title: src.path || ""}, src.name,
			    src.kind === "notebook" ? el("span", {class: "kindtag"}, "notebook") : null),
			 el("p", {class: "sub"}, sub),
			 el("p", {class: "path"}, src.path || ""),
			 src.text === null || src.text === undefined
				 ? el("p", {class: "notice"}, "Source text unavailable" + (src.unavailable ? ": " + src.unavailable : "") + ".")
				 : null,
			 src.stale ? el("p", {class: "notice bad"}, "This text is not what ran: " + src.stale + ".") : null),
		      el("div", {class: "vtools"}, modeSwitch(render), hot,
			 heatSwitch("source", heatOpts, function (heat) {
				 t.o.heatKind = heat === "mem" ? "mheat" : "heat";
				 t.refresh(false);
			 })));
	root.appendChild(head);
	return hot;
}

// The view's hooks for the shell: scroll state across re-renders, and entering at a line.
function sourceViewHooks(t, hot) {
	return {
		table: t,
		state: function () {
			return {top: t.root.scrollTop, left: t.root.scrollLeft};
		},
		restore: function (st) {
			t.root.scrollTop = st.top || 0;
			t.root.scrollLeft = st.left || 0;
			t.draw(true);
		},
		enter: function (route) {
			var line = Number(route.b);
			if (!(line >= 1))
				return;
			if (!t.scrollToRow(line) && UI.hotOnly) {
				UI.hotOnly = false;
				hot.querySelector("input").checked = false;
				t.refresh(true);
				t.scrollToRow(line);
			}
			t.root.scrollLeft = 0;
		},
	};
}

function isHot(m, x, T) {
	if (x < 0)
		return false;
	return (T && T[x] > 0) || (m.samples && m.samples[x] > 0) || (m.hits && m.hits[x] > 0) ||
	       (m.mem_change && m.mem_change[x] > 0) || (m.gpu_s && m.gpu_s[x] > 0);
}

// On-CPU time split into Python, native and kernel (a stacked bar, like Scalene's).
function splitColumn(m, val) {
	function parts(line) {
		return [val(m.python_s, line), val(m.native_s, line), val(m.kernel_s, line)];
	}
	return {id: "split", label: "On-CPU", kind: "num", w: 92,
		title: "On-CPU time split: Python / native / kernel",
		value: function (line) {
			var p = parts(line), t = 0, any = false;
			for (var i = 0; i < 3; i++)
				if (isNum(p[i])) {
					t += p[i];
					any = true;
				}
			return any ? t : null;
		},
		cell: function (td, line) {
			var p = parts(line), t = 0;
			for (var i = 0; i < 3; i++)
				if (isNum(p[i]))
					t += p[i];
			if (!(t > 0)) {
				var known = isNum(p[0]) || isNum(p[1]) || isNum(p[2]);
				setNum(td, known ? "0 s" : DASH, known);
				return;
			}
			var names = ["Python", "native", "kernel"], tip = [];
			var bar = el("span", {class: "split"});
			for (i = 0; i < 3; i++) {
				var f = isNum(p[i]) ? p[i] / t : 0;
				tip.push(names[i] + " " + (isNum(p[i]) ? fmtPct(f) + " (" + fmtTime(p[i]) + ")" : DASH));
				if (f > 0) {
					var seg = el("span", {class: "seg" + i});
					seg.style.width = (f * 100).toFixed(1) + "%";
					bar.appendChild(seg);
				}
			}
			td.title = "On-CPU " + fmtTime(t) + ": " + tip.join(" \u00b7 ");
			td.appendChild(bar);
		}};
}

function lineNumberCell(td, m, s, line) {
	var a = el("a", {class: "lnum", href: srcHref(s, line), title: "Line menu: copy, permalink, callers, callees"},
		   String(shownLine(s, line)));
	a.addEventListener("click", function (e) {
		if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey)
			return;
		e.preventDefault();
		e.stopPropagation();
		// The address bar shows the permalink without a jump or a new history entry.
		try {
			history.replaceState(history.state, "", srcHref(s, line));
		} catch (err) {
			// keep the old address
		}
		if (UI.view && UI.view.table)
			UI.view.table.setTarget(line);
		openLineMenu(a, m, s, line);
	});
	td.appendChild(a);
	var f = functionAt(s, line);
	var callers = f && f.def === line ? m.edges.callers.get(s * KEY_LINE + line) : null;
	var callees = m.edges.callees.get(s * KEY_LINE + line);
	if (callers || callees) {
		var mk = el("span", {class: "marks"});
		if (callers)
			mk.appendChild(el("button", {type: "button", class: "mk up", title: "Callers of " + f.name,
						     "aria-label": "Callers"}, "\u25b2"));
		if (callees)
			mk.appendChild(el("button", {type: "button", class: "mk down", title: "Functions called here",
						     "aria-label": "Callees"}, "\u25bc"));
		mk.addEventListener("click", function (e) {
			e.stopPropagation();
			openLineMenu(mk, m, s, line);
		});
		td.appendChild(mk);
	}
}

function copyButton(label, text) {
	var b = el("button", {type: "button", class: "btn"}, label);
	b.addEventListener("click", function () {
		copyText(text, function (ok) {
			b.textContent = ok ? "Copied" : "Copy failed";
			setTimeout(function () {
				b.textContent = label;
			}, 1200);
		});
	});
	return b;
}

function fileLineText(s, line) {
	var src = D.sources[s], c = cellAt(s, line), path = src.path || src.name;
	return c ? path + " " + cellName(c) + ":" + (line - c.first + 1) : path + ":" + line;
}

function openLineMenu(anchor, m, s, line) {
	openMenu(anchor, function (menu) {
		menu.classList.add("linemenu");
		menu.appendChild(el("div", {class: "mhead"}, el("strong", null, locText(s, line)),
				    el("span", {class: "path"}, D.sources[s].path || "")));
		var permalink = location.href.split("#")[0] + srcHref(s, line);
		menu.appendChild(el("div", {class: "mrow"}, copyButton("Copy file:line", fileLineText(s, line)),
				    copyButton("Copy link", permalink),
				    el("a", {class: "btn", href: srcHref(s, line)}, "Permalink")));
		var f = functionAt(s, line);
		if (f)
			menu.appendChild(el("p", {class: "mfn"}, "In ", el("a", {class: "fnname", href: srcHref(s, f.def)}, f.name),
					    ", defined at ", srcLink(s, f.def)));
		var E = m.edges;
		var callers = f ? E.callers.get(s * KEY_LINE + f.def) || [] : [];
		menu.appendChild(el("div", {class: "msec"}, "Callers", f ? " of " + f.name : "",
				    el("span", {class: "count"}, String(callers.length))));
		menu.appendChild(edgeList(callers.map(function (i) {
			return {s: E.src[i], line: E.line[i], n: E.samples[i], label: locText(E.src[i], E.line[i])};
		}), f ? "No recorded callers." : "Not inside a recorded function."));
		var callees = E.callees.get(s * KEY_LINE + line) || [];
		menu.appendChild(el("div", {class: "msec"}, "Called from this line",
				    el("span", {class: "count"}, String(callees.length))));
		menu.appendChild(edgeList(callees.map(function (i) {
			var fn = functionNamed(E.csrc[i], E.cline[i]);
			return {s: E.csrc[i], line: E.cline[i], n: E.samples[i],
				label: (fn ? fn.name + " \u00b7 " : "") + locText(E.csrc[i], E.cline[i])};
		}), "No recorded calls."));
		var ctx = m.ctx.get(s * KEY_LINE + line);
		if (ctx) {
			menu.appendChild(el("div", {class: "msec"}, "Started here"));
			var ul = el("ul", {class: "edges"});
			ctx.forEach(function (c) {
				ul.appendChild(el("li", null, contextBadge(c)));
			});
			menu.appendChild(ul);
		}
	});
}

function edgeList(items, emptyText) {
	if (!items.length)
		return el("p", {class: "muted small"}, emptyText);
	items.sort(function (a, b) {
		return (isNum(b.n) ? b.n : -1) - (isNum(a.n) ? a.n : -1);
	});
	var ul = el("ul", {class: "edges"});
	items.slice(0, 50).forEach(function (it) {
		ul.appendChild(el("li", null, el("a", {class: "loc", href: srcHref(it.s, it.line)}, it.label),
				  el("span", {class: "n"}, isNum(it.n) ? fmtCount(it.n) + " samples" : "")));
	});
	if (items.length > 50)
		ul.appendChild(el("li", {class: "muted"}, "\u2026 and " + (items.length - 50) + " more"));
	return ul;
}

function childPid(ch) {
	return isNum(ch.pid) ? ch.pid : D.processes[ch.proc] ? D.processes[ch.proc].pid : null;
}

// A child run or Spark action as a compact link; the title holds the details.
function contextBadge(c) {
	if (c.kind === "child") {
		var ch = D.children[c.i], st = childStatus(ch), pid = childPid(ch);
		var detail = (ch.cmd || "") + (isNum(pid) ? " (pid " + pid + ")" : "") + " \u2014 waited " +
			     fmtTime(ch.wait_s) + (isNum(ch.duration_s) ? ", ran " + fmtTime(ch.duration_s) : "") +
			     (ch.exit ? ", " + ch.exit : "") + ", " + st +
			     (ch.via === "waiting thread" ? " (started by a library's thread while this line waited)" : "");
		return el("a", {class: "ctxb child " + st.toLowerCase(), href: href("child/" + c.i), title: detail},
			  el("span", {class: "badge " + st.toLowerCase()},
			     st === "Reference" ? "Ref" : ch.kind === "notebook" ? "nb" : "run"),
			  " " + (ch.cmd || "child").split(/\s+/).slice(0, 2).join(" "),
			  el("span", {class: "sub"}, " " + fmtTime(ch.wait_s)));
	}
	var a = D.spark.actions[c.i], name = sparkName(a, c.i);
	return el("a", {class: "ctxb spark", href: href("spark/" + c.i),
			title: "Spark action " + name + ": " + fmtTime(a.wall_s) +
			       (a.match === "time" ? " (matched by time)" : "")},
		  el("span", {class: "badge spark"}, "Spark"), " " + name,
		  el("span", {class: "sub"}, " " + fmtTime(a.wall_s)));
}

function contextCell(td, m, s, line) {
	var ctx = m.ctx.get(s * KEY_LINE + line);
	if (!ctx)
		return;
	ctx.forEach(function (c) {
		td.appendChild(contextBadge(c));
	});
}
