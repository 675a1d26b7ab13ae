// SPDX-License-Identifier: MIT
// GPU: device cards, attributed GPU time (kept apart from wall time and driver time), sampled
// memory peaks, the lines with device work, and (--timeline) each device's busy strip and the
// lines its launching threads were at while it was idle.

VIEWS.gpu = {label: "GPU", icon: "\u25a3", when: hasGpu, render: renderGpu};

function renderGpu(root, r) {
	var ctl = pageView(root), m = sel(), G = D.gpu || {};
	root.appendChild(viewHead("GPU", "Which source lines have sampled device work and GPU memory?",
				  helpLink("gpu", {class: "more"}, "About GPU measurements \u2197")));
	var gpuT = sumOf(m.gpu_s), drv = sumOf(m.driver_s), peak = NaN;
	for (var i = 0; m.gpu_peak_mem && i < m.n; i++)
		if (m.gpu_peak_mem[i] === m.gpu_peak_mem[i] && !(m.gpu_peak_mem[i] <= peak))
			peak = m.gpu_peak_mem[i];
	var cards = el("div", {class: "cards"});
	cards.appendChild(card("Attributed GPU time", fmtTime(gpuT), "sum of line estimates; not part of wall time"));
	cards.appendChild(card("GPU peak memory", fmtBytes(peak), "highest sampled device memory"));
	cards.appendChild(card("Driver time", fmtTime(drv), "host time in the driver; can overlap GPU time"));
	cards.appendChild(card("Elapsed wall time", fmtTime(D.run.elapsed_s), "for comparison only; never added"));
	root.appendChild(cards);

	var devs = list(G.devices);
	if (devs.length) {
		root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Devices")));
		var dl = el("div", {class: "devices"});
		devs.forEach(function (d, k) {
			var c = el("div", {class: "card device"},
				   el("div", {class: "clabel"}, "GPU " + (isNum(d.index) ? d.index : k)),
				   el("div", {class: "dname"}, d.name || DASH),
				   el("dl", null,
				      el("dt", null, "Memory"), el("dd", null, fmtBytes(d.memory_total)),
				      el("dt", null, "Peak sampled"), el("dd", null, fmtBytes(d.peak_mem)),
				      el("dt", null, "Driver"), el("dd", null, d.driver || DASH),
				      el("dt", null, "CUDA"), el("dd", null, d.cuda || DASH)));
			if (d.memory_note)
				c.appendChild(el("p", {class: "notice bad"}, "Device memory unavailable: " + d.memory_note));
			dl.appendChild(c);
		});
		root.appendChild(dl);
	}
	var notes = list(G.notes);
	if (notes.length)
		root.appendChild(el("ul", {class: "notes"}, notes.map(function (n) {
			return el("li", null, String(n));
		})));

	list(G.timeline).forEach(function (u) {
		root.appendChild(deviceTimeline(u));
	});

	var rows = [];
	for (i = 0; i < m.n; i++)
		if ((m.gpu_s && m.gpu_s[i] === m.gpu_s[i]) || (m.gpu_peak_mem && m.gpu_peak_mem[i] === m.gpu_peak_mem[i]) ||
		    (m.driver_s && m.driver_s[i] === m.driver_s[i]))
			rows.push(i);
	root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Lines with device work"),
			    el("span", {class: "sub"}, fmtCount(rows.length) + " lines")));
	var g = lineGetters(m), gs = g.src, gl = g.line, loc = colLocFor(rows, gs, gl);
	var cols = [colTime("gpu", "GPU time", function (x) {
		return m.gpu_s ? m.gpu_s[x] : NaN;
	}, "Sampled device work attributed to the launching line"), loc,
		    colBytes("gpumem", "GPU peak memory", function (x) {
			    return m.gpu_peak_mem ? m.gpu_peak_mem[x] : NaN;
		    }), colTime("driver", "Driver time", function (x) {
			    return m.driver_s ? m.driver_s[x] : NaN;
		    }), colTime("native", "Launched for it", function (x) {
			    return m.gpu_native_s ? m.gpu_native_s[x] : NaN;
		    }, "Part of GPU time that a native thread launched while this line waited for it " +
		       "(autograd's device threads in loss.backward())"),
		    colTime("nccl", "NCCL", function (x) {
			    return m.gpu_nccl_s ? m.gpu_nccl_s[x] : NaN;
		    }, "Part of GPU time in NCCL kernels (communication)"), colCode(gs, gl)];
	var t = new Table({columns: cols, rows: rows, sort: {id: "gpu", dir: -1}, cls: "index gpulines",
			   minW: sourceMinW(rows, gs, gl), empty: "No line has GPU measurements in this selection."});
	t.root.classList.add("bounded");
	root.appendChild(t.root);
	t.draw(true);
	watchScroll(root);
	return ctl;
}

// One device's timeline: its busy share over its active window, what kept it busy, and the
// lines its launching threads were at while it was idle (a line of a thread that never launched
// on it is not a cause).
function deviceTimeline(u) {
	var act = u.end_s - u.start_s, idle = u.idle_s, sec = el("section", {class: "gputl", "data-device": u.index});
	var pr = D.processes[u.proc], who = pr ? hostOf(pr) + (isNum(pr.rank) ? "rank " + pr.rank + " " : "") : "";
	sec.appendChild(el("div", {class: "sechead"}, el("h2", null, (who ? who + "\u00b7 " : "") + "GPU " + u.index + " timeline"),
			   el("span", {class: "sub"}, "busy " + fmtPct(u.utilization) + " of " + fmtTime(act) +
			      " from its first work to its last (" + fmtTime(u.start_s) + " to " + fmtTime(u.end_s) + ")")));
	var top = list(u.idle_lines).filter(function (l) {
		return inSel(l.proc);
	})[0];
	// the answer first: how idle, and the line most of it went to
	sec.appendChild(el("p", {class: "gpusummary"}, "GPU " + u.index + " was idle " + fmtPct(act > 0 ? idle / act : 0) +
			   " of the time" + (top ? "; " + fmtPct(top.idle_share) + " of that while " : "."),
			   top ? srcLink(top.src, top.line) : null, top ? " ran." : null));
	var cards = el("div", {class: "cards"});
	cards.appendChild(card("Idle", fmtTime(idle), fmtPct(act > 0 ? idle / act : 0) + " of its active window, in " +
			       fmtCount(u.gaps) + " gaps (longest " + fmtTime(u.longest_gap_s) + ")"));
	cards.appendChild(card("Kernels", fmtTime(u.kernel_s), "of which NCCL " + fmtTime(u.nccl_s)));
	cards.appendChild(card("Copies and sets", fmtTime(u.copy_s + u.set_s), "copies " + fmtTime(u.copy_s) + ", sets " + fmtTime(u.set_s)));
	cards.appendChild(card("Idle explained", fmtPct(idle > 0 ? u.idle_explained_s / idle : 0),
			       "while " + fmtCount(u.launching_threads) + " launching thread" + (u.launching_threads === 1 ? " was" : "s were") + " at a line"));
	sec.appendChild(cards);
	sec.appendChild(busyStrip(u));
	var st = list(u.streams).filter(function (x) {
		return inSel(x.proc);
	});
	if (st.length)
		sec.appendChild(el("p", {class: "streams"}, "Streams: " + st.map(function (x) {
			return procShort(x.proc) + " stream " + x.stream + " busy " + fmtTime(x.busy_s) + " (" + fmtCount(x.spans) + ")";
		}).join(" \u00b7 ")));
	var L = list(u.idle_lines), rows = [];
	for (var i = 0; i < L.length; i++)
		if (inSel(L[i].proc))
			rows.push(i);
	sec.appendChild(el("div", {class: "sechead"}, el("h3", null, "Why GPU " + u.index + " was idle"),
			   el("span", {class: "sub"}, fmtCount(rows.length) + " lines")));
	var gs = function (x) {
		return L[x].src;
	}, gl = function (x) {
		return L[x].line;
	};
	var cols = [colTime("idle", "Idle time", function (x) {
		return L[x].idle_s;
	}, "Device idle time while a thread that launches on it was at this line"),
		    {id: "share", label: "Of idle", kind: "num", num: true, w: numW(6, "Of idle"),
		     title: "Share of the device's idle time; lines of several threads can overlap",
		     value: function (x) {
			     return L[x].idle_share;
		     }, cell: function (td, x) {
			     setNum(td, fmtPct(L[x].idle_share), isNum(L[x].idle_share));
		     }},
		    colLocFor(rows, gs, gl),
		    colTime("cpu", "On CPU", function (x) {
			    return L[x].cpu_s;
		    }, "Part of it the thread ran on a CPU (host-side work: preprocessing, Python overhead)"),
		    colTime("blocked", "Blocked", function (x) {
			    return L[x].blocked_s;
		    }, "Part of it the thread was blocked: waiting for data, I/O, a lock or the GIL"),
		    colCode(gs, gl)];
	var t = new Table({columns: cols, rows: rows, sort: {id: "idle", dir: -1}, cls: "index gpuidle",
			   minW: sourceMinW(rows, gs, gl), empty: "No launching thread was on the timeline while this device was idle."});
	t.root.classList.add("bounded");
	sec.appendChild(t.root);
	t.draw(true);
	sec.appendChild(longestGaps(u));
	return sec;
}

// The device's longest idle gaps, each with the lines that had most of it.
function longestGaps(u) {
	var G = list(u.longest_gaps), rows = G.map(function (g, i) {
		return i;
	});
	var box = el("div", null, el("div", {class: "sechead"}, el("h3", null, "Longest idle gaps"),
				     el("span", {class: "sub"}, fmtCount(rows.length) + " of " + fmtCount(u.gaps))));
	var cols = [colTime("glen", "Idle", function (x) {
		return G[x].idle_s;
	}, "Length of the gap"), colTime("gstart", "Starts at", function (x) {
		return G[x].start_s;
	}, "From the start of the recording"),
		    {id: "glines", label: "While at", kind: "none", w: 420,
		     title: "The lines its launching threads were at, most of the gap first",
		     cell: function (td, x) {
			     var L = list(G[x].lines).filter(function (l) {
				     return inSel(l.proc);
			     });
			     if (!L.length)
				     setNum(td, DASH, false);
			     L.forEach(function (l, k) {
				     if (k)
					     td.appendChild(document.createTextNode(", "));
				     td.appendChild(srcLink(l.src, l.line));
				     td.appendChild(document.createTextNode(" " + fmtTime(l.idle_s)));
			     });
		     }}];
	var t = new Table({columns: cols, rows: rows, sort: {id: "glen", dir: -1}, cls: "index gpugaps",
			   empty: "The device was never idle inside its active window."});
	box.appendChild(t.root);
	t.draw(true);
	return box;
}

// The busy share of each equal part of the active window, as bars (idle is the empty part), the
// copies' and sets' share in front of it; then a lane per stream (the busiest), shaded by its share.
function busyStrip(u) {
	var S = u.busy_series, v = list(S.values), cp = list(S.copies), W = 800, H = 56;
	var bw = W / Math.max(1, v.length);
	var s = svg("svg", {width: "100%", height: H, viewBox: "0 0 " + W + " " + H, preserveAspectRatio: "none",
			    class: "busystrip", role: "img",
			    "aria-label": "GPU " + u.index + " busy " + fmtPct(u.utilization) + " over its active window"});
	s.appendChild(svg("rect", {x: 0, y: 0, width: W, height: H, class: "idlebg"}));
	v.forEach(function (f, j) {
		if (!(f > 0))
			return;
		var r = svg("rect", {x: j * bw, y: H * (1 - f), width: bw + 0.2, height: H * f, class: "busy"});
		r.appendChild(svg("title"));
		r.firstChild.textContent = fmtTime(S.start_s + j * S.step_s) + ": busy " + fmtPct(f) +
			(cp[j] > 0 ? ", copies and sets " + fmtPct(cp[j]) : "");
		s.appendChild(r);
		if (cp[j] > 0)
			s.appendChild(svg("rect", {x: j * bw, y: H * (1 - cp[j]), width: bw + 0.2, height: H * cp[j], class: "copy"}));
	});
	var box = el("div", {class: "busywrap"}, s);
	var lanes = list(S.streams).filter(function (l) {
		return inSel(l.proc);
	});
	if (lanes.length)
		box.appendChild(el("div", {class: "lanes"}, lanes.map(function (l) {
			var ls = svg("svg", {width: "100%", height: 12, viewBox: "0 0 " + W + " 12", preserveAspectRatio: "none",
					     class: "lane", "aria-hidden": "true"});
			list(l.values).forEach(function (f, j) {
				if (f > 0)
					ls.appendChild(svg("rect", {x: j * bw, y: 0, width: bw + 0.2, height: 12, class: "busy",
								    "fill-opacity": Math.max(0.15, f).toFixed(3)}));
			});
			return el("div", {class: "laneRow"}, el("span", {class: "lname", title: procShort(l.proc)},
								    "stream " + l.stream), ls);
		})));
	return box;
}

