// SPDX-License-Identifier: MIT
// Spark: the actions the driver triggered (with their source line) and, per action, the main
// plan steps in data-flow order. Executor metrics and driver wall time are shown side by side,
// never added.

VIEWS.spark = {label: "Spark", icon: "\u2726", when: hasSpark, render: renderSpark};

function renderSpark(root, r) {
	var ctl = pageView(root), A = list(D.spark && D.spark.actions);
	if (r.a !== undefined && A[Number(r.a)]) {
		renderSparkAction(root, Number(r.a));
		watchScroll(root);
		return ctl;
	}
	root.appendChild(viewHead("Spark", "How does data flow, and which steps cost time or memory?",
				  helpLink("spark", {class: "more"}, "About Spark \u2197")));
	var rows = [];
	A.forEach(function (a, i) {
		if (a && inSel(a.proc))
			rows.push(i);
	});
	var cols = [
		colTime("wall", "Wall time", function (i) {
			return A[i].wall_s;
		}, "Driver wall time of the action"),
		{id: "action", label: "Action", kind: "name", w: 150, value: function (i) {
			return A[i].name;
		}, cell: function (td, i) {
			td.appendChild(el("a", {href: href("spark/" + i), class: "mono"}, A[i].name || "action " + i));
		}},
		colLoc(function (i) {
			return A[i].src;
		}, function (i) {
			return A[i].line;
		}),
		colCount("jobs", "Jobs", function (i) {
			return A[i].jobs;
		}),
		colTime("executor", "Executor time", function (i) {
			return A[i].executor_s;
		}, "Cumulative executor task time; overlaps wall time"),
		colBytes("peak", "Peak memory", function (i) {
			return A[i].peak_mem;
		}),
		colBytes("spill", "Spill", function (i) {
			return A[i].spill;
		}),
		{id: "status", label: "Status", kind: "name", value: function (i) {
			return A[i].status;
		}, cell: function (td, i) {
			var st = A[i].status || "";
			td.appendChild(el("span", {class: "badge " + (st === "failed" ? "failed" : "")}, st || DASH));
		}},
	];
	cols[2].w = 190;
	var t = new Table({columns: cols, rows: rows, sort: {id: "wall", dir: -1}, cls: "index spark", minW: 100,
			   empty: "No Spark action in this selection."});
	root.appendChild(t.root);
	t.draw(true);
	var notes = list(D.spark.notes);
	if (notes.length)
		root.appendChild(el("ul", {class: "notes spaced"}, notes.map(function (n) {
			return el("li", null, String(n));
		})));
	watchScroll(root);
	return ctl;
}

function renderSparkAction(root, i) {
	var a = D.spark.actions[i];
	root.appendChild(viewHead("Spark action: " + (a.name || i),
				  [el("a", {href: href("spark")}, "\u2190 All actions"), " \u00b7 ",
				   isNum(a.src) ? ["Triggered at ", srcLink(a.src, a.line)] : "Trigger source unavailable"]));
	var cards = el("div", {class: "cards"});
	cards.appendChild(card("Wall time", fmtTime(a.wall_s), "driver, waiting for the action"));
	cards.appendChild(card("Executor time", fmtTime(a.executor_s), "cumulative task time; overlaps"));
	cards.appendChild(card("Peak memory", fmtBytes(a.peak_mem)));
	cards.appendChild(card("Disk spill", fmtBytes(a.spill)));
	cards.appendChild(card("Jobs", fmtCount(a.jobs), a.status || null));
	root.appendChild(cards);
	if (isNum(a.src) && D.sources[a.src]) {
		var code = el("code", {class: "excerpt"});
		codeCell(code, a.src, a.line, false, true);
		root.appendChild(el("div", {class: "start"}, el("h2", null, "Trigger line"), code));
	}
	var steps = list(a.steps), rows = steps.map(function (s, k) {
		return k;
	});
	var maxT = 0;
	steps.forEach(function (s) {
		if (s && s.time_s > maxT)
			maxT = s.time_s;
	});
	root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Main plan steps")));
	var cols = [
		colCount("step", "Step", function (k) {
			return k + 1;
		}),
		{id: "label", label: "What it does", kind: "name", w: 200, value: function (k) {
			return steps[k].label;
		}, cell: function (td, k) {
			td.textContent = steps[k].label || DASH;
		}},
		{id: "from", label: "From step", kind: "name", w: 100, value: function (k) {
			return list(steps[k].from).join(" + ");
		}, cell: function (td, k) {
			setNum(td, list(steps[k].from).join(" + ") || DASH, list(steps[k].from).length > 0);
		}},
		colCount("rows", "Rows after", function (k) {
			return steps[k].rows;
		}, "Rows after this step (numOutputRows)", 11),
		colTime("time", "Time", function (k) {
			return steps[k].time_s;
		}),
		colBytes("peak", "Peak memory", function (k) {
			return steps[k].peak_mem;
		}),
		{id: "detail", label: "Operator", kind: "name", value: function (k) {
			return steps[k].detail;
		}, cell: function (td, k) {
			td.classList.add("mono");
			var s = steps[k];
			if (s.time_s > 0) {
				var bar = el("span", {class: "tbar"});
				bar.style.width = Math.max(2, Math.round(60 * s.time_s / maxT)) + "px";
				td.appendChild(bar);
			}
			td.appendChild(document.createTextNode(s.detail || ""));
		}},
	];
	var t = new Table({columns: cols, rows: rows, sort: {id: "step", dir: 1}, cls: "index steps", minW: 240,
			   empty: "No plan steps were captured for this action."});
	root.appendChild(t.root);
	t.draw(true);
}
