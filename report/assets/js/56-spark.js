// SPDX-License-Identifier: MIT
// Spark: the applications whose event logs were read, the actions the driver triggered (with
// their source line) and, per action (57-spark-action.js), its cost, plan steps, stages and
// plans. Executor metrics and driver wall time are shown side by side, never added. Every string
// of D.spark comes from a log: it reaches the page as text only.

VIEWS.spark = {label: "Spark", icon: "\u2726", when: hasSpark, render: renderSpark};

function sparkActions() {
	return list(D.spark && D.spark.actions);
}

function sparkApps() {
	return list(D.spark && D.spark.applications);
}

// Whether an action belongs to the selection. An action no driver line matched has no process
// (proc null): it belongs to no single process or group, so only "All processes" lists it.
function sparkInSel(a) {
	return isNum(a.proc) ? inSel(a.proc) : selMask(SEL) === null;
}

function sparkStatusBadge(status) {
	var st = status ? String(status) : "";
	return el("span", {class: "badge sstatus " + (st === "failed" ? "failed" : st === "running" ? "running" : "")},
		  st || DASH);
}

// "matched by time": the trigger line was found by the action's time window, not its call site.
function sparkMatchLabel(a) {
	return a.match === "time"
		? el("span", {class: "matchtime", title: "The log names no call site in a profiled file: this line was " +
							  "sampled inside the action's time window"}, "matched by time")
		: null;
}

// The trigger line as a link, or why there is none.
function sparkTrigger(a) {
	if (isNum(a.src) && D.sources[a.src])
		return [srcLink(a.src, a.line), sparkMatchLabel(a)];
	return el("span", {class: "muted nosrc"}, "Trigger source unavailable");
}

function sparkName(a, i) {
	return a.name ? String(a.name) : "action " + i;
}

function renderSpark(root, r) {
	var ctl = pageView(root), A = sparkActions();
	if (r.a !== undefined && A[Number(r.a)]) {
		renderSparkAction(root, Number(r.a));
		watchScroll(root);
		return ctl;
	}
	root.appendChild(viewHead("Spark", "How does data flow, and which steps cost time or memory?",
				  helpLink("spark", {class: "more"}, "About Spark \u2197")));
	var apps = sparkAppList();
	if (apps)
		root.appendChild(apps);
	var rows = [];
	A.forEach(function (a, i) {
		if (a && sparkInSel(a))
			rows.push(i);
	});
	var t = new Table({columns: sparkColumns(A), rows: rows, sort: {id: "wall", dir: -1},
			   cls: "index spark", minW: 190, empty: "No Spark action in this selection."});
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

// One line per application: name, id, Spark version, status, and the log it was read from.
function sparkAppList() {
	var apps = sparkApps();
	if (!apps.length)
		return null;
	return el("ul", {class: "sparkapps"}, apps.map(function (ap, k) {
		ap = ap || {};
		return el("li", {class: "sparkapp", "data-app": k},
			  el("span", {class: "appname"}, ap.name ? String(ap.name) : "application " + k),
			  el("span", {class: "mono sub"}, " " + (ap.id ? String(ap.id) : DASH)),
			  " \u00b7 Spark " + (ap.spark_version ? String(ap.spark_version) : DASH) + " \u00b7 ",
			  sparkStatusBadge(ap.status),
			  el("span", {class: "sub"}, " \u00b7 log "),
			  el("span", {class: "mono applog"}, ap.log ? String(ap.log) : DASH),
			  el("span", {class: "sub"}, " (" + (ap.codec ? String(ap.codec) : "codec unknown") + ")"));
	}));
}

function sparkColumns(A) {
	var cols = [
		colTime("wall", "Wall time", function (i) {
			return A[i].wall_s;
		}, "The action's own window (its SQL execution or jobs), from the event log"),
		{id: "action", label: "Action", kind: "name", w: 96, value: function (i) {
			return A[i].name;
		}, cell: function (td, i) {
			td.appendChild(el("a", {href: href("spark/" + i), class: "mono", title: A[i].description || null},
					  sparkName(A[i], i)));
		}},
		{id: "loc", label: "Location", kind: "loc", cls: "locc", title: "The line that triggered the action",
		 value: function (i) {
			 var a = A[i];
			 return isNum(a.src) && D.sources[a.src] ? locKey(a.src, a.line) : null;
		 }, cell: function (td, i) {
			 append(td, sparkTrigger(A[i]));
		 }},
		colTime("maxop", "Largest operator", function (i) {
			return A[i].max_op_s;
		}, "The largest step time of the action's plan (an operator's own timing metric)"),
		colCount("jobs", "Jobs", function (i) {
			return A[i].jobs;
		}, null, 4),
		colCount("tasks", "Tasks", function (i) {
			return A[i].tasks;
		}, null, 6),
		colTime("executor", "Executor time", function (i) {
			return A[i].executor_s;
		}, "Cumulative executor task time; overlaps wall time"),
		colBytes("peak", "Peak memory", function (i) {
			return A[i].peak_mem;
		}, false, "Largest task peak execution memory"),
		colBytes("spill", "Spill", function (i) {
			return A[i].spill;
		}, false, "Bytes spilled to disk"),
		{id: "status", label: "Status", kind: "name", w: 104, value: function (i) {
			return A[i].status;
		}, cell: function (td, i) {
			td.appendChild(sparkStatusBadge(A[i].status));
		}},
	];
	cols[3].w += 8; // "Largest operator" and its sort arrow on two lines
	if (sparkApps().length > 1)
		cols.splice(2, 0, {id: "app", label: "Application", kind: "name", w: 120, value: function (i) {
			return sparkAppName(A[i].app);
		}, cell: function (td, i) {
			td.textContent = sparkAppName(A[i].app) || DASH;
			td.setAttribute("title", td.textContent);
		}});
	return cols;
}

function sparkAppName(k) {
	var ap = isNum(k) ? sparkApps()[k] : null;
	return ap && ap.name ? String(ap.name) : null;
}
