// SPDX-License-Identifier: MIT
// Diffs (`report NEW --diff BASE`, D.diff): the Δ Time and Δ% columns of the line, function and
// file tables, and the Overview's summary of what changed. The rows come summed over processes
// and matched by the C side (docs/report-data.md, "diff"); null in a plain report.

var DIFF_INDEX = null;

// (src, line), (src, function) and src -> diff row; the rows only in the base apart.
function diffIndex() {
	if (DIFF_INDEX || !D.diff)
		return DIFF_INDEX;
	var X = D.diff, ix = {lines: new Map(), funcs: new Map(), files: new Map(),
			      gone: {lines: [], functions: [], files: []}};
	X.lines.forEach(function (r) {
		if (isNum(r.src) && D.sources[r.src] && isNum(r.line))
			ix.lines.set(r.src * KEY_LINE + r.line, r);
		else
			ix.gone.lines.push(r);
	});
	X.functions.forEach(function (r) {
		if (isNum(r.src) && D.sources[r.src])
			ix.funcs.set(r.src + "\u0000" + r["function"], r);
		else
			ix.gone.functions.push(r);
	});
	X.files.forEach(function (r) {
		if (isNum(r.src) && D.sources[r.src])
			ix.files.set(r.src, r);
		else
			ix.gone.files.push(r);
	});
	DIFF_INDEX = ix;
	return ix;
}

function diffLine(s, line) {
	var ix = diffIndex();
	return ix ? ix.lines.get(s * KEY_LINE + line) : undefined;
}

function diffFunc(s, name) {
	var ix = diffIndex();
	return ix ? ix.funcs.get(s + "\u0000" + name) : undefined;
}

function diffFile(s) {
	var ix = diffIndex();
	return ix ? ix.files.get(s) : undefined;
}

function fmtDelta(s) {
	return isNum(s) ? (s > 0 ? "+" : "") + fmtTime(s) : DASH;
}

var MATCH_TITLE = {
	same : "Matched by path and line, with the same text",
	moved : "Matched by its offset in its function, which moved: the same text at another line",
	edited : "At the same place in its function (which may have moved); its text changed",
	"new" : "Only in the new profile",
	gone : "Only in the base profile",
};

// Δ% as sorted: relative to the base; a row the base did not have sorts above every change.
function diffPct(d) {
	if (!d)
		return NaN;
	if (isNum(d.delta_pct))
		return d.delta_pct;
	return d.match === "new" ? Infinity : NaN;
}

// The two columns every diffed table gets; get(row) is that row's diff row or undefined.
function diffColumns(get) {
	return [
		{id: "dtime", label: "\u0394 Time", kind: "num", num: true, w: numW(9, "\u0394 Time"),
		 title: "New Time minus base Time (all processes); regressions are positive",
		 value: function (r) {
			 var d = get(r);
			 return d ? d.delta_time_s : NaN;
		 }, cell: function (td, r) {
			 var d = get(r);
			 setNum(td, d ? fmtDelta(d.delta_time_s) : DASH, !!d);
			 if (d && d.delta_time_s)
				 td.classList.add(d.delta_time_s > 0 ? "grow" : "better");
		 }},
		{id: "dpct", label: "\u0394%", kind: "num", num: true, w: numW(7, "\u0394%"),
		 title: "Change relative to the base's Time; \u201cnew\u201d: not in the base",
		 value: function (r) {
			 return diffPct(get(r));
		 }, cell: function (td, r) {
			 var d = get(r);
			 if (!d) {
				 setNum(td, DASH, false);
				 return;
			 }
			 if (isNum(d.delta_pct))
				 setNum(td, (d.delta_pct > 0 ? "+" : "") + d.delta_pct.toFixed(Math.abs(d.delta_pct) < 10 ? 1 : 0) + "%", true);
			 else
				 setNum(td, d.match === "new" ? "new" : DASH, d.match === "new");
			 if (d.match !== "same") {
				 td.classList.add("dmatch", "m-" + d.match);
				 td.title = MATCH_TITLE[d.match] + (d.match === "moved" ? " (base line " + d.base_line + ")" : "");
			 }
		 }},
	];
}

// The Overview's account of the comparison: both runs, how lines matched, biggest changes.
function diffSection() {
	var X = D.diff, ix = diffIndex(), box = el("section", {class: "diff", "aria-label": "Changes against the base profile"});
	box.appendChild(el("div", {class: "sechead"}, el("h2", null, "Changes against the base profile"),
			   helpLink("diffs", {class: "more"}, "About diffs \u2197")));
	var b = X.base || {};
	box.appendChild(el("p", {class: "diffsum"},
			   "Base ", el("code", null, String(X.base_profile || "?")),
			   (b.started_at ? " (" + b.started_at + ", " + fmtTime(b.elapsed_s) + " elapsed)" : "") +
			   ": Time " + fmtTime(X.base_time_s) + " \u2192 " + fmtTime(X.time_s) + ", " +
			   fmtDelta(X.delta_time_s) + (isNum(X.delta_pct) ? " (" + (X.delta_pct > 0 ? "+" : "") + X.delta_pct.toFixed(1) + "%)" : "") +
			   ". Lines: " + X.matching.same + " same, " + X.matching.moved + " moved with their function, " +
			   X.matching.edited + " edited, " + X.matching["new"] + " only here, " + X.matching.gone +
			   " only in the base. Shares are of each profile's own total Time."));
	(X.notes || []).forEach(function (n) {
		box.appendChild(el("p", {class: "notice"}, String(n)));
	});
	var rows = [];
	X.lines.forEach(function (r, i) {
		if (r.delta_time_s)
			rows.push(i);
	});
	rows.sort(function (a, c) {
		return Math.abs(X.lines[c].delta_time_s) - Math.abs(X.lines[a].delta_time_s);
	});
	rows = rows.slice(0, 25);
	var get = function (i) {
		return X.lines[i];
	};
	var cols = diffColumns(get).concat([
		colTime("time", "Time", function (i) {
			return X.lines[i].time_s;
		}),
		colTime("base", "Base", function (i) {
			return X.lines[i].base_time_s;
		}, "Time in the base profile"),
		{id: "loc", label: "Location", kind: "name", w: 260, value: function (i) {
			return X.lines[i].path + ":" + (X.lines[i].line || X.lines[i].base_line);
		}, cell: function (td, i) {
			var r = X.lines[i];
			if (isNum(r.src) && D.sources[r.src] && isNum(r.line))
				td.appendChild(srcLink(r.src, r.line, D.sources[r.src].name + ":" + r.line));
			else
				td.appendChild(el("span", {class: "muted", title: "Only in the base profile"},
						  baseName(r.path) + ":" + r.base_line + " (base)"));
		}},
		{id: "fn", label: "Function", kind: "name", w: 200, value: function (i) {
			return X.lines[i]["function"] || "";
		}, cell: function (td, i) {
			td.textContent = X.lines[i]["function"] || DASH;
		}},
		{id: "src", label: "Source", kind: "none", cls: "srcc", value: null, cell: function (td, i) {
			var r = X.lines[i];
			td.appendChild(el("code", {class: "code"}, String(r.source !== null ? r.source : r.base_source || "").trim()));
		}},
	]);
	var t = new Table({columns: cols, rows: rows, sort: {id: "dtime", dir: -1}, cls: "index dlines",
			   empty: "No line's Time changed."});
	box.appendChild(el("h3", null, "Largest changes by line"));
	box.appendChild(t.root);
	t.draw(true);
	if (ix.gone.functions.length) {
		box.appendChild(el("h3", null, "Functions only in the base profile"));
		box.appendChild(el("ul", {class: "notes gone"}, ix.gone.functions.slice(0, 50).map(function (r) {
			return el("li", null, r["function"] + " (" + baseName(r.path) + ":" + r.base_first_line + "), " +
				  fmtTime(r.base_time_s));
		})));
	}
	return box;
}

function baseName(p) {
	p = String(p || "?");
	return p.slice(p.lastIndexOf("/") + 1);
}
