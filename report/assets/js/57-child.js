// SPDX-License-Identifier: MIT
// A child invocation (a process or notebook started by a profiled line): its collection
// metadata, the line that waited for it, and its own hottest lines.

VIEWS.child = {label: "Child run", hidden: true, render: renderChild};

function renderChild(root, r) {
	var ctl = pageView(root), i = Number(r.a), ch = D.children[i];
	if (!ch) {
		root.appendChild(viewHead("Child run not found", "This report has no child invocation #" + r.a + "."));
		return ctl;
	}
	var st = childStatus(ch), pr = D.processes[ch.proc], pid = childPid(ch);
	root.appendChild(viewHead(ch.cmd || "Child run " + i,
				  [el("span", {class: "badge " + st.toLowerCase()}, st), " ",
				   ch.kind === "notebook" ? "Notebook run" : "Child process",
				   isNum(pid) ? " \u00b7 pid " + pid : "", " \u00b7 ",
				   el("a", {href: href("files")}, "All child invocations \u2192")]));
	if (st === "Reference")
		root.appendChild(el("p", {class: "notice"}, "Reference: an inline run inside its parent process. " +
				   "Its lines are measured as part of that process, not as a separate run."));
	var dl = el("dl", {class: "meta"});
	function row(k, v) {
		dl.appendChild(el("dt", null, k));
		dl.appendChild(el("dd", null, v === null || v === undefined || v === "" ? DASH : v));
	}
	row("Command", el("span", {class: "mono"}, ch.cmd || DASH));
	if (ch.via === "waiting thread")
		row("Waited for at", [isNum(ch.src) ? srcLink(ch.src, ch.line) : DASH,
				      el("span", {class: "sub"}, " started by a library's thread while this line waited")]);
	else
		row("Started at", isNum(ch.src) ? srcLink(ch.src, ch.line) : DASH);
	row("Parent", isNum(ch.parent_proc) && D.processes[ch.parent_proc]
			      ? el("a", {href: "#overview?p=" + ch.parent_proc}, procLabel(ch.parent_proc)) : DASH);
	row("Parent waited", fmtTime(ch.wait_s));
	row("Duration", fmtTime(ch.duration_s));
	row("Status", st);
	row("Exit", ch.exit || DASH);
	if (pr) {
		row("Process", el("a", {href: "#overview?p=" + ch.proc, title: "Show only this process"}, procLabel(ch.proc)));
		row("Python", pr.python || "not Python");
		row("Threads", fmtCount(pr.threads));
		row("Samples", fmtCount(pr.samples));
		if (pr.note)
			row("Note", pr.note);
	}
	if (isNum(ch.source) && D.sources[ch.source])
		row("Captured source", srcLink(ch.source, null, D.sources[ch.source].name));
	root.appendChild(el("section", {class: "start"}, el("h2", null, "Collection metadata"), dl));
	if (pr && st !== "Reference") {
		var m = selOf(ch.proc), hot = topRows(m, m.time_s, 15);
		root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Its hottest lines"),
				    el("a", {href: "#overview?p=" + ch.proc, class: "more"}, "Show this process \u2192")));
		var g = lineGetters(m), gs = g.src, gl = g.line, loc = colLocFor(hot, gs, gl);
		var cols = [colTime("time", "Time", function (x) {
			return m.time_s ? m.time_s[x] : NaN;
		}), loc];
		if (m.has.samples)
			cols.push(colCount("samples", "Samples", function (x) {
				return m.samples[x];
			}));
		if (m.has.hits)
			cols.push(colCount("hits", "Hits", function (x) {
				return m.hits[x];
			}));
		cols.push(colCode(gs, gl));
		var t = new Table({columns: cols, rows: hot, sort: {id: "time", dir: -1}, cls: "index hot",
				   minW: sourceMinW(hot, gs, gl),
				   empty: pr.note ? "No source lines: " + pr.note + "." : "No line has a measured time."});
		root.appendChild(t.root);
		t.draw(true);
	}
	watchScroll(root);
	return ctl;
}
