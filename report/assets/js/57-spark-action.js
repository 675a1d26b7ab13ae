// SPDX-License-Identifier: MIT
// One Spark action (#spark/I): its cost (the action's window from the log, the driver line's
// sampled time, cumulative executor time: side by side, never added), the line that triggered
// it, the main plan steps in data-flow order, its stages, its plans as text, and how each
// number was collected.

function renderSparkAction(root, i) {
	var a = D.spark.actions[i], app = sparkAppName(a.app);
	root.appendChild(viewHead("Spark action: " + sparkName(a, i),
				  [el("a", {href: href("spark")}, "\u2190 All actions"), " \u00b7 ",
				   isNum(a.src) && D.sources[a.src] ? ["Triggered at ", sparkTrigger(a)]
								    : sparkTrigger(a),
				   app !== null ? [" \u00b7 application ", el("span", {class: "appname"}, app)] : null],
				  helpLink("spark", {class: "more"}, "About Spark \u2197")));
	root.appendChild(sparkCards(a));
	if (a.status === "failed" && a.error)
		root.appendChild(el("p", {class: "notice bad sparkerror"}, el("strong", null, "Failed: "), String(a.error)));
	root.appendChild(sparkTriggerSection(a));
	sparkStepsSection(root, a);
	sparkStagesSection(root, a);
	root.appendChild(sparkPlansSection(a));
	var how = list(a.how);
	if (how.length)
		root.appendChild(el("section", {class: "sparkhow"},
				    el("div", {class: "sechead"}, el("h2", null, "How these numbers were collected")),
				    el("ul", {class: "notes"}, how.map(function (h) {
					    return el("li", null, String(h));
				    }))));
}

// The action's stages, skipped ones included: stage_details (docs/report-data.md), or none.
function sparkStageList(a) {
	return list(a.stage_details).filter(function (st) {
		return st && typeof st === "object";
	});
}

function sparkCards(a) {
	var stages = sparkStageList(a);
	// "stages" counts the attempts that ran; the list also holds the skipped ones
	var nStages = isNum(a.stages) ? a.stages : stages.filter(function (st) {
		return st.status !== "skipped";
	}).length;
	var skipped = isNum(a.skipped_stages) ? a.skipped_stages : stages.filter(function (st) {
		return st.status === "skipped";
	}).length;
	var cards = el("div", {class: "cards spark"});
	cards.appendChild(card("Wall time", fmtTime(a.wall_s), "the action's window, from the event log"));
	cards.appendChild(card("Driver line", isNum(a.driver_s) ? fmtTime(a.driver_s) : "not sampled",
			       isNum(a.driver_wait_s) ? fmtTime(a.driver_wait_s) + " off-CPU"
						      : isNum(a.driver_s) ? "sampled inside the window" : null,
			       isNum(a.driver_s) ? null : "ctext na"));
	var cpu = isNum(a.executor_cpu_s) ? "CPU " + fmtTime(a.executor_cpu_s) + " \u00b7 " : "";
	cards.appendChild(card("Executor time", fmtTime(a.executor_s),
			       cpu + "cumulative task time; overlaps wall time"));
	cards.appendChild(card("Peak memory", fmtBytes(a.peak_mem), "largest task peak"));
	cards.appendChild(card("Disk spill", fmtBytes(a.spill)));
	cards.appendChild(card("Jobs", fmtCount(a.jobs),
			       list(a.job_ids).length ? "ids " + list(a.job_ids).join(", ") : null));
	cards.appendChild(card("Stages", fmtCount(nStages), fmtCount(skipped) + " skipped"));
	cards.appendChild(card("Tasks", fmtCount(a.tasks),
			       isNum(a.failed_tasks) ? fmtCount(a.failed_tasks) + " failed" : null,
			       a.failed_tasks > 0 ? "warn" : null));
	var st = a.status ? String(a.status) : DASH;
	var c = card("Status", st, a.status === "failed" && a.error ? String(a.error) : null,
		     "ctext" + (a.status === "failed" ? " bad" : ""));
	if (a.error)
		c.setAttribute("title", String(a.error));
	cards.appendChild(c);
	Array.prototype.forEach.call(cards.children, function (x) {
		x.setAttribute("data-card", x.firstChild.textContent);
	});
	return cards;
}

var SPARK_MATCH = {
	"call site": "the call site the event log names",
	"time": "the action's time window (the log names no call site in a profiled file)",
};

function sparkTriggerSection(a) {
	var sec = el("section", {class: "start sparktrigger"}, el("h2", null, "Trigger line"));
	if (isNum(a.src) && D.sources[a.src]) {
		var code = el("code", {class: "excerpt"});
		codeCell(code, a.src, a.line, false, true);
		sec.appendChild(code);
	}
	var dl = el("dl", {class: "meta"});
	function row(k, v, cls) {
		dl.appendChild(el("dt", null, k));
		dl.appendChild(el("dd", {class: cls || null}, v === null || v === undefined || v === "" ? DASH : v));
	}
	row("Location", sparkTrigger(a));
	row("Call site", a.call_site ? String(a.call_site) : null, "mono callsite");
	row("Matched by", a.match ? SPARK_MATCH[a.match] || String(a.match)
			      : "nothing: no driver line matched this action", "matchkind");
	if (a.description)
		row("Description", String(a.description));
	if (isNum(a.execution))
		row("SQL execution", String(a.execution));
	row("Started", isNum(a.start_s) ? fmtTime(a.start_s) + " after the profile's start" : null);
	sec.appendChild(dl);
	return sec;
}

// "Measured together": a step of a WholeStageCodegen pipeline without its own time shows the
// pipeline's; rows carried from the input (not measured) are shown greyed.
function sparkStepsSection(root, a) {
	var steps = list(a.steps).map(function (s) {
		return s || {};
	}), rows = steps.map(function (s, k) {
		return k;
	});
	var maxT = 0, together = false;
	steps.forEach(function (s) {
		if (s.time_s > maxT)
			maxT = s.time_s;
		if (!isNum(s.time_s) && isNum(s.pipeline_time_s))
			together = true;
	});
	function shownTime(s) {
		return isNum(s.time_s) ? s.time_s : isNum(s.pipeline_time_s) ? s.pipeline_time_s : null;
	}
	root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Main plan steps")));
	var time = colTime("time", "Time", function (k) {
		return shownTime(steps[k]);
	}, "The step's largest timing metric (never summed); a pipeline's time for the steps it measures together");
	time.w = together ? numW(24, "Time") : time.w;
	time.cell = function (td, k) {
		var s = steps[k];
		if (isNum(s.time_s) || !isNum(s.pipeline_time_s)) {
			setNum(td, fmtTime(s.time_s), isNum(s.time_s));
			return;
		}
		td.setAttribute("title", "pipeline " + s.pipeline + ": its steps are measured together");
		td.appendChild(el("span", {class: "together"}, "Measured together"));
		td.appendChild(document.createTextNode(" " + fmtTime(s.pipeline_time_s)));
	};
	var rowsCol = colCount("rows", "Rows after", function (k) {
		return steps[k].rows;
	}, "Rows after this step (numOutputRows)", 11);
	rowsCol.cell = function (td, k) {
		var s = steps[k];
		setNum(td, fmtCount(s.rows), isNum(s.rows));
		if (s.rows_from_input) {
			td.classList.add("frominput");
			td.setAttribute("title", "From input \u00b7 unchanged");
		}
	};
	var cols = [
		colCount("step", "Step", function (k) {
			return k + 1;
		}, null, 3),
		{id: "label", label: "What it does", kind: "name", w: 200, value: function (k) {
			return steps[k].label;
		}, cell: function (td, k) {
			td.textContent = steps[k].label ? String(steps[k].label) : DASH;
		}},
		{id: "from", label: "From step", kind: "name", w: 90, value: function (k) {
			return list(steps[k].from).join(" + ");
		}, cell: function (td, k) {
			setNum(td, list(steps[k].from).join(" + ") || DASH, list(steps[k].from).length > 0);
		}},
		rowsCol, time,
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
			td.appendChild(document.createTextNode(s.detail ? String(s.detail) : ""));
		}},
	];
	cols[0].first = 1;
	var t = new Table({columns: cols, rows: rows, sort: {id: "step", dir: 1}, cls: "index steps", minW: 240,
			   empty: "No plan steps were captured for this action."});
	root.appendChild(t.root);
	t.draw(true);
}

function sparkStagesSection(root, a) {
	var S = sparkStageList(a), rows = S.map(function (s, k) {
		return k;
	});
	root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Stages"),
			    el("span", {class: "sub small"}, "A skipped stage did not run: its output was already there")));
	var t = new Table({columns: sparkStageColumns(S), rows: rows, sort: {id: "stage", dir: 1},
			   cls: "index stages", minW: 160, empty: "No stage of this action is in the log."});
	root.appendChild(t.root);
	t.draw(true);
}

function sparkStageColumns(S) {
	// a skipped stage did not run for this action: every measurement is a dash
	function v(f) {
		return function (k) {
			return S[k].status === "skipped" ? null : S[k][f];
		};
	}
	var tasks = colCount("tasks", "Tasks", v("tasks"), "Tasks of the stage attempt (failed ones in brackets)", 9);
	tasks.cell = function (td, k) {
		var n = v("tasks")(k), f = v("failed_tasks")(k);
		setNum(td, fmtCount(n), isNum(n));
		if (f > 0)
			td.appendChild(el("span", {class: "bad"}, " (" + fmtCount(f) + " failed)"));
	};
	var spill = colBytes("spill", "Spill", v("spill_bytes"), false, "Bytes spilled to disk");
	var spillCell = spill.cell;
	spill.cell = function (td, k) {
		spillCell(td, k);
		var m = v("memory_spill_bytes")(k);
		if (isNum(m))
			td.setAttribute("title", "memory spill " + fmtBytes(m));
	};
	return [
		{id: "stage", label: "Stage", kind: "num", num: true, first: 1, w: numW(6, "Stage"),
		 title: "Stage id.attempt", value: function (k) {
			 return isNum(S[k].id) ? S[k].id * 65536 + (isNum(S[k].attempt) ? S[k].attempt : 0) : null;
		 }, cell: function (td, k) {
			 var s = S[k];
			 setNum(td, isNum(s.id) ? s.id + "." + (isNum(s.attempt) ? s.attempt : 0) : DASH, isNum(s.id));
		 }},
		{id: "name", label: "Name", kind: "name", cls: "mono", value: function (k) {
			return S[k].name;
		}, cell: function (td, k) {
			td.textContent = S[k].name ? String(S[k].name) : DASH;
			td.setAttribute("title", td.textContent);
		}},
		{id: "status", label: "Status", kind: "name", w: 100, value: function (k) {
			return S[k].status;
		}, cell: function (td, k) {
			td.appendChild(sparkStatusBadge(S[k].status));
		}},
		tasks,
		colTime("wall", "Wall", v("wall_s"), "Submission to completion"),
		colTime("executor", "Executor", v("executor_s"), "Cumulative task run time; overlaps wall time"),
		colTime("cpu", "CPU", v("cpu_s"), "Cumulative task CPU time"),
		colTime("gc", "GC", v("gc_s"), "Cumulative JVM garbage collection time"),
		colBytes("input", "Input", v("input_bytes")),
		colBytes("output", "Output", v("output_bytes")),
		colBytes("sread", "Shuffle read", v("shuffle_read_bytes")),
		colBytes("swrite", "Shuffle write", v("shuffle_write_bytes")),
		spill,
		colBytes("peak", "Peak memory", v("peak_mem"), false, "Largest task peak execution memory"),
		colTime("p50", "Task p50", v("task_p50_s"), "Median task duration"),
		colTime("p95", "Task p95", v("task_p95_s"), "95th percentile task duration"),
		colTime("pmax", "Task max", v("task_max_s"), "Longest task"),
	];
}

// The plans as the log wrote them, in <pre> blocks (text only).
function sparkPlansSection(a) {
	var P = a.plans && typeof a.plans === "object" ? a.plans : {};
	var sec = el("section", {class: "sparkplans"}, el("div", {class: "sechead"}, el("h2", null, "Plans")));
	function block(kind, label, text, none) {
		if (typeof text !== "string" || !text) {
			sec.appendChild(el("p", {class: "muted small", "data-plan": kind}, label + ": " + none));
			return;
		}
		var pre = el("pre", {class: "plan"});
		pre.textContent = text;
		sec.appendChild(el("details", {class: "plan", "data-plan": kind}, el("summary", null, label), pre));
	}
	block("physical", "Physical plan", P.physical, "not in the log");
	block("final", "Final adaptive plan", P.final, "no adaptive update in the log");
	return sec;
}
