// SPDX-License-Identifier: MIT
// Cells and columns shared by the views: measurements with dashes for unknown values, source
// code with highlighting and symbol links, locations, and the heat scale.

var METRIC = {ch: 7.8, num: 7.2}; // px per monospace cell and per digit; measured at start

function measureFonts() {
	var probe = el("div", {class: "probe", "aria-hidden": "true"},
		       el("span", {class: "code"}, "0123456789".repeat(10)),
		       el("span", {class: "numprobe"}, "0123456789".repeat(10)));
	document.body.appendChild(probe);
	var a = probe.firstChild.getBoundingClientRect().width / 100;
	var b = probe.lastChild.getBoundingClientRect().width / 100;
	probe.remove();
	if (a > 3)
		METRIC.ch = a;
	if (b > 3)
		METRIC.num = b;
}

// Width of a column holding `chars` characters of table text (plus padding), and at least the
// width of its heading (small capitals and the sort arrow).
function numW(chars, label) {
	var w = Math.ceil(chars * METRIC.num + 18), word = 0;
	// headings wrap onto two lines, so the longest word (in small capitals) is what must fit
	(label || "").split(/\s+/).forEach(function (x) {
		word = Math.max(word, x.length);
	});
	return Math.max(w, Math.ceil(word * 8.2 + 30));
}

// Heat on a log scale relative to the largest value: 3 decades map onto levels 1..10 (smaller
// positive values keep the faintest level); zero, negative and unknown values get no heat.
var HEAT_DECADES = 3;

function heatLevel(v, max) {
	if (!(v > 0) || !(max > 0))
		return 0;
	var t = 1 + Math.log10(v / max) / HEAT_DECADES;
	return Math.max(1, Math.min(10, Math.ceil(t * 10)));
}

function setNum(td, text, known) {
	td.textContent = text;
	if (!known)
		td.classList.add("na");
}

// ---- source code --------------------------------------------------------------------------

var pyStateCache = new Map();

function pyStatesOf(s) {
	var st = pyStateCache.get(s);
	if (!st) {
		var src = D.sources[s];
		var lines = srcLines(s);
		st = src && (src.kind === "python" || src.kind === "notebook" || /\.py$/.test(src.path || ""))
			     ? cellStates(s, lines) : null;
		pyStateCache.set(s, st || false);
	}
	return st || null;
}

// Notebook cells are separate programs: a string left open in one cell does not leak into the next.
function cellStates(s, lines) {
	var cells = D.sources[s].cells;
	if (!cells)
		return pyStates(lines);
	var out = new Array(lines.length).fill(0);
	cells.forEach(function (c) {
		var part = pyStates(lines.slice(c.first - 1, c.first - 1 + c.nlines));
		for (var i = 0; i < part.length; i++)
			out[c.first - 1 + i] = part[i];
	});
	return out;
}

// Symbol links of a source, grouped by line: line -> [[col_start, col_end, target_src, target_line]].
var linkCache = new Map();

function linksOf(s) {
	var m = linkCache.get(s);
	if (m)
		return m;
	m = new Map();
	var sym = D.symbols[s], links = sym && list(sym.links);
	for (var i = 0; links && i < links.length; i++) {
		var k = links[i];
		if (!Array.isArray(k) || k.length < 5 || !isNum(k[0]) || !isNum(k[3]) || !D.sources[k[3]])
			continue;
		if (!m.has(k[0]))
			m.set(k[0], []);
		m.get(k[0]).push(k);
	}
	linkCache.set(s, m);
	return m;
}

// Fills td with the text of `line` of source s: highlighted tokens, and each linked symbol span
// as its own link to the definition. Text nodes only.
function codeCell(td, s, line, withLinks, trim) {
	td.classList.add("code");
	var lines = srcLines(s), text = lines[line - 1];
	if (text === undefined) {
		td.classList.add("na");
		td.textContent = D.sources[s] && typeof D.sources[s].text !== "string" ? DASH : "";
		return;
	}
	var states = pyStatesOf(s);
	var spans = states ? pyLine(text, states[line - 1]) : [];
	var links = withLinks ? linksOf(s).get(line) : null;
	if (trim) { // index tables show the statement without its indentation
		var cut = text.length - text.replace(/^\s+/, "").length;
		if (cut) {
			text = text.slice(cut);
			spans = spans.map(function (sp) {
				return [Math.max(0, sp[0] - cut), sp[1] - cut, sp[2]];
			}).filter(function (sp) {
				return sp[1] > 0;
			});
		}
	}
	if (!spans.length && !links) {
		td.textContent = text;
		return;
	}
	var n = text.length, cls = new Array(n), lk = links ? new Int32Array(n).fill(-1) : null, i, j;
	for (i = 0; i < spans.length; i++)
		for (j = spans[i][0]; j < spans[i][1] && j < n; j++)
			cls[j] = spans[i][2];
	for (i = 0; links && i < links.length; i++)
		for (j = Math.max(0, links[i][1]); j < links[i][2] && j < n; j++)
			lk[j] = i;
	var pos = 0, host = td, curLink = -1;
	while (pos < n) {
		var c = cls[pos], l = lk ? lk[pos] : -1, end = pos + 1;
		while (end < n && cls[end] === c && (!lk || lk[end] === l))
			end++;
		if (l !== curLink) {
			curLink = l;
			if (l < 0) {
				host = td;
			} else {
				var k = links[l];
				host = el("a", {class: "sym", href: srcHref(k[3], k[4]),
						title: "Go to definition: " + locText(k[3], k[4])});
				td.appendChild(host);
			}
		}
		var piece = text.slice(pos, end);
		if (c)
			host.appendChild(el("span", {class: "t-" + c}, piece));
		else
			host.appendChild(document.createTextNode(piece));
		pos = end;
	}
}

// Longest line of a source in monospace cells (for the width of the Source column).
function maxLineCells(s, lines) {
	var w = 0, ls = lines || srcLines(s);
	for (var i = 0; i < ls.length; i++) {
		if (ls[i].length * 2 < w)
			continue;
		var c = textCells(ls[i]);
		if (c > w)
			w = c;
	}
	return w;
}

// ---- column factories ---------------------------------------------------------------------

function colTime(id, label, get, title) {
	return {id: id, label: label, kind: "num", num: true, w: numW(8, label), title: title,
		value: get, cell: function (td, r) {
			var v = get(r);
			setNum(td, fmtTime(v), isNum(v));
		}};
}

function colCount(id, label, get, title, chars) {
	return {id: id, label: label, kind: "num", num: true, w: numW(chars || 7, label),
		title: title, value: get, cell: function (td, r) {
			var v = get(r);
			setNum(td, fmtCount(v), isNum(v));
		}};
}

function colBytes(id, label, get, signed, title) {
	return {id: id, label: label, kind: "num", num: true, w: numW(9, label),
		title: title, value: get, cell: function (td, r) {
			var v = get(r);
			setNum(td, fmtBytes(v, signed), isNum(v));
			if (signed && v > 0)
				td.classList.add("grow");
		}};
}

// A process id: a number, but written without thousands separators.
function colPid(get, id, label) {
	return {id: id || "pid", label: label || "PID", kind: "num", num: true, first: 1, w: numW(7, label || "PID"),
		value: get,
		cell: function (td, r) {
			var v = get(r);
			setNum(td, isNum(v) ? String(v) : DASH, isNum(v));
		}};
}

// Location: a link to the source line; sorts by file, then position in the file.
function colLoc(getSrc, getLine, label, id) {
	return {id: id || "loc", label: label || "Location", kind: "loc", cls: "locc", w: 260,
		value: function (r) {
			var s = getSrc(r);
			return isNum(s) && D.sources[s] ? locKey(s, getLine(r)) : null;
		},
		cell: function (td, r) {
			var s = getSrc(r);
			td.appendChild(srcLink(s, getLine(r)));
		}};
}

// The code of a line in an index table; sorting it restores source order.
function colCode(getSrc, getLine, minW) {
	return {id: "source", label: "Source", kind: "loc", first: 1,
		title: "The captured source line; sorting restores source order",
		value: function (r) {
			var s = getSrc(r);
			return isNum(s) && D.sources[s] ? locKey(s, getLine(r)) : null;
		},
		cell: function (td, r) {
			var s = getSrc(r);
			if (isNum(s) && D.sources[s])
				codeCell(td, s, getLine(r), false, true);
			else
				setNum(td, DASH, false);
		}};
}

// A Location column sized to the longest label among rows.
function colLocFor(rows, getSrc, getLine, label) {
	var loc = colLoc(getSrc, getLine, label);
	loc.w = locWidth(rows, getSrc, getLine);
	return loc;
}

// Source and line getters of a selection model's line rows.
function lineGetters(m) {
	return {src: function (r) {
		return m.src[r];
	}, line: function (r) {
		return m.line[r];
	}};
}

// Location column width that fits the longest label among rows (within reason).
function locWidth(rows, getSrc, getLine) {
	var w = 8;
	for (var i = 0; i < rows.length && i < 5000; i++) {
		var s = getSrc(rows[i]);
		if (isNum(s) && D.sources[s])
			w = Math.max(w, locText(s, getLine(rows[i])).length);
	}
	return Math.min(420, Math.ceil(w * METRIC.num * 0.95 + 24));
}

function sourceMinW(rows, getSrc, getLine) {
	var w = 20;
	for (var i = 0; i < rows.length && i < 2000; i++) {
		var s = getSrc(rows[i]), t = isNum(s) ? srcLines(s)[getLine(rows[i]) - 1] : null;
		if (t)
			w = Math.max(w, textCells(t.trim()));
	}
	return Math.ceil(w * METRIC.ch + 24);
}

// The Self/Total switch shared by views whose Time can be own or inclusive.
function modeSwitch(onChange) {
	return segmented("Time", "self-total", [
		{value: "self", label: "Self", title: "Time on the line itself (library and native work folded in)"},
		{value: "total", label: "Total", title: "Inclusive time: the line anywhere on the stack"}],
			 UI.mode, function (v) {
				 UI.mode = v;
				 onChange();
			 }, "mode-switch");
}

function heatSwitch(kind, opts, onChange) {
	return segmented("Heatmap by", "heatmap", opts, UI.heat[kind], function (v) {
		UI.heat[kind] = v;
		onChange(v);
	}, "heat-" + kind);
}
