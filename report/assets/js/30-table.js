// SPDX-License-Identifier: MIT
// Sortable tables with sticky headings that draw only the rows in view once they are long.
//
// Every row has the same height (one line, no wrapping), so a table of 20,000 source lines is a
// top spacer, the ~100 rows around the viewport and a bottom spacer. Sorting follows the report
// guide: names alphabetically, locations by position, measurements numerically; unknown values
// last in both directions; ties keep the natural (line) order; groups (notebook cells) keep their
// order and rows sort inside them.
//
// Column: {id, label, kind: "num" | "name" | "loc" | "order" | "none", num (right-aligned),
//	    w (px width; omit for the one flexible column), title, cls, value(r), cell(td, r)}.
// Options: {columns, rows (row ids, natural order), sort: {id, dir}, groups: {of(r), label(g)},
//	     filter(r), heat(r) -> 0..10, rowInit(tr, r), fill, minW, empty, cls, onSort(state)}.

var VIRT_MIN = 400; // tables longer than this draw only the rows in view
var OVERSCAN = 40;

function Table(o) {
	var t = this;
	t.o = o;
	t.cols = o.columns;
	t.sortId = o.sort ? o.sort.id : null;
	t.dir = o.sort ? o.sort.dir : 1;
	t.rowH = 24; // replaced by the measured height after the first draw
	t.measured = false;
	t.extraPad = 0;
	t.target = -1;
	t.range = [-1, -1];
	t.items = [];
	t.root = el("div", {class: "tscroll" + (o.fill ? " fill" : "")});
	t.table = el("table", {class: "grid" + (o.cls ? " " + o.cls : "")});
	t.colgroup = el("colgroup");
	t.thead = el("thead");
	t.tbody = el("tbody");
	t.table.appendChild(t.colgroup);
	t.table.appendChild(t.thead);
	t.table.appendChild(t.tbody);
	t.root.appendChild(t.table);
	t.buildHead();
	t.sortItems();
	var pending = false;
	// a taller window shows more rows: draw them
	if (window.ResizeObserver)
		new ResizeObserver(function () {
			if (t.items.length > VIRT_MIN)
				t.draw(false);
		}).observe(t.root);
	t.root.addEventListener("scroll", function () {
		if (pending)
			return;
		pending = true;
		requestAnimationFrame(function () {
			pending = false;
			t.draw(false);
		});
	}, {passive: true});
}

Table.prototype.col = function (id) {
	for (var i = 0; i < this.cols.length; i++)
		if (this.cols[i].id === id)
			return this.cols[i];
	return null;
};

Table.prototype.buildHead = function () {
	var t = this, tr = el("tr", {class: "heads"}), sum = 0, flex = false;
	clear(t.colgroup);
	clear(t.thead);
	t.cols.forEach(function (c) {
		var col = el("col", {"data-col": c.id});
		if (c.w) {
			col.style.width = c.w + "px";
			sum += c.w;
		} else {
			flex = true;
		}
		t.colgroup.appendChild(col);
		var th = el("th", {"data-col": c.id, scope: "col", title: c.title,
				   class: (c.num ? "num " : "") + (c.cls || "")});
		if (c.kind && c.kind !== "none") {
			var b = el("button", {type: "button", class: "sort"}, c.label,
				   el("span", {class: "arrow", "aria-hidden": "true"}));
			b.addEventListener("click", function () {
				t.sortBy(c.id);
			});
			th.appendChild(b);
		} else {
			th.appendChild(el("span", {class: "plain"}, c.label));
			if (!c.label)
				th.setAttribute("aria-label", c.aria || "Line");
		}
		tr.appendChild(th);
	});
	t.thead.appendChild(tr);
	if (t.o.groups) {
		t.ghead = el("span", {class: "glabel"});
		t.thead.appendChild(el("tr", {class: "ghead"},
				       el("th", {colspan: t.cols.length}, t.ghead)));
	}
	var minW = sum + (flex ? t.o.minW || 240 : 0);
	t.table.style.width = "max(100%, " + Math.ceil(minW) + "px)";
	t.markSort();
};

Table.prototype.markSort = function () {
	var t = this;
	Array.prototype.forEach.call(t.thead.querySelectorAll("tr.heads th"), function (th) {
		var id = th.getAttribute("data-col"), c = t.col(id), arrow = th.querySelector(".arrow");
		if (!arrow)
			return;
		if (id === t.sortId) {
			th.setAttribute("aria-sort", t.dir > 0 ? "ascending" : "descending");
			arrow.textContent = t.dir > 0 ? "\u2191" : "\u2193";
			th.classList.add("sorted");
		} else {
			th.removeAttribute("aria-sort");
			arrow.textContent = "\u2195";
			th.classList.remove("sorted");
		}
		th.querySelector("button").setAttribute(
			"aria-label", c.label + ": sort " +
				      (id === t.sortId ? (t.dir > 0 ? "descending" : "ascending")
						       : firstDir(c) > 0 ? "ascending" : "descending"));
	});
};

// Measurements start from the largest; names, locations and line order from the first.
function firstDir(c) {
	return c.first || (c.kind === "num" ? -1 : 1);
}

Table.prototype.sortBy = function (id) {
	var c = this.col(id);
	if (!c)
		return;
	if (this.sortId === id)
		this.dir = -this.dir;
	else {
		this.sortId = id;
		this.dir = firstDir(c);
	}
	this.markSort();
	this.extraPad = 0;
	this.sortItems();
	this.root.scrollTop = 0;
	this.draw(true);
	if (this.o.onSort)
		this.o.onSort({id: this.sortId, dir: this.dir});
};

Table.prototype.sortItems = function () {
	var t = this, o = t.o, rows = o.rows, n = rows.length, idx = [], i;
	for (i = 0; i < n; i++)
		if (!o.filter || o.filter(rows[i]))
			idx.push(i);
	var c = t.col(t.sortId), dir = t.dir, kind = c ? c.kind : "order";
	var grp = o.groups ? new Int32Array(n) : null;
	if (grp)
		for (i = 0; i < idx.length; i++)
			grp[idx[i]] = o.groups.of(rows[idx[i]]);
	var keys = null;
	if (c && kind !== "order" && kind !== "none") {
		keys = new Array(n);
		for (i = 0; i < idx.length; i++) {
			var v = c.value(rows[idx[i]]);
			keys[idx[i]] = v === undefined || v === null || v !== v || v === "" ? null : v;
		}
	}
	idx.sort(function (a, b) {
		if (grp && grp[a] !== grp[b])
			return grp[a] - grp[b];
		if (!keys)
			return (a - b) * dir;
		var ka = keys[a], kb = keys[b];
		if (ka === null || kb === null) {
			if (ka === kb)
				return a - b;
			return ka === null ? 1 : -1; // unknown values last, whichever the direction
		}
		var r = kind === "name" ? COLLATOR.compare(ka, kb) : ka < kb ? -1 : ka > kb ? 1 : 0;
		return r ? r * dir : a - b; // ties keep line order
	});
	var items = [];
	var last = -1;
	for (i = 0; i < idx.length; i++) {
		if (grp && grp[idx[i]] !== last) {
			// the first group's label is the one under the headings; later groups get a boundary
			if (last >= 0 || i > 0)
				items.push(-1 - grp[idx[i]]);
			last = grp[idx[i]];
		}
		items.push(idx[i]);
	}
	t.items = items;
	t.range = [-1, -1];
};

// Draws the rows around the viewport (or all of them for a short table).
Table.prototype.draw = function (force) {
	var t = this, n = t.items.length, a = 0, b = n;
	if (n > VIRT_MIN) {
		var top = t.root.scrollTop, vh = t.root.clientHeight || window.innerHeight;
		var first = Math.floor(top / t.rowH), vis = Math.ceil(vh / t.rowH) + 1;
		if (!force && t.range[0] >= 0 && first - t.range[0] >= 5 &&
		    t.range[1] - (first + vis) >= 5) {
			t.updateGroupHead();
			return;
		}
		a = Math.max(0, first - OVERSCAN);
		b = Math.min(n, first + vis + OVERSCAN);
	} else if (!force && t.range[0] === 0 && t.range[1] === n) {
		t.updateGroupHead();
		return;
	}
	t.range = [a, b];
	var frag = document.createDocumentFragment(), span = t.cols.length;
	if (a > 0)
		frag.appendChild(spacer(span, a * t.rowH));
	if (n === 0)
		frag.appendChild(el("tr", {class: "empty"},
				    el("td", {colspan: span}, t.o.empty || "Nothing to show.")));
	for (var i = a; i < b; i++)
		frag.appendChild(t.row(t.items[i]));
	if ((n - b) * t.rowH + t.extraPad > 0)
		frag.appendChild(spacer(span, (n - b) * t.rowH + t.extraPad));
	t.tbody.replaceChildren(frag);
	// Short tables never need the row height, and measuring forces a layout: only long ones do.
	if (n > VIRT_MIN && t.measure()) {
		t.draw(true);
		return;
	}
	t.updateGroupHead();
};

// Measures the row height once; true when it differs from the assumed one.
Table.prototype.measure = function () {
	if (this.measured || !this.root.isConnected)
		return false;
	var tr = this.tbody.querySelector("tr.r");
	var hgt = tr ? tr.getBoundingClientRect().height : 0;
	if (!(hgt > 0))
		return false;
	this.measured = true;
	if (Math.abs(hgt - this.rowH) <= 0.25)
		return false;
	this.rowH = hgt;
	return true;
};

function spacer(span, hgt) {
	var td = el("td", {colspan: span});
	td.style.height = hgt + "px";
	return el("tr", {class: "spacer", "aria-hidden": "true"}, td);
}

Table.prototype.row = function (item) {
	var o = this.o, tr;
	if (item < 0) {
		var g = -1 - item;
		tr = el("tr", {class: "group", "data-group": g},
			el("td", {colspan: this.cols.length}, el("span", {class: "glabel"}, o.groups.label(g))));
		return tr;
	}
	var r = o.rows[item];
	tr = document.createElement("tr");
	var cls = "r";
	if (o.heat) {
		var lv = o.heat(r);
		if (lv > 0)
			cls += " " + (o.heatKind || "heat") + " h" + lv;
	}
	if (r === this.target)
		cls += " target";
	tr.className = cls;
	tr.setAttribute("data-row", r);
	if (o.rowInit)
		o.rowInit(tr, r);
	for (var i = 0; i < this.cols.length; i++) {
		var c = this.cols[i], td = document.createElement("td");
		td.className = (c.num ? "num " : "") + (c.cls || "");
		c.cell(td, r);
		tr.appendChild(td);
	}
	return tr;
};

// The label of the group (notebook cell) at the top of the viewport, under the headings.
Table.prototype.updateGroupHead = function () {
	if (!this.ghead || !this.items.length)
		return;
	if (this.root.scrollTop > 0)
		this.measure();
	var k = Math.min(this.items.length - 1, Math.max(0, Math.floor(this.root.scrollTop / this.rowH)));
	var it = this.items[k];
	var g = it < 0 ? -1 - it : this.o.groups.of(this.o.rows[it]);
	if (this.gshown !== g) {
		this.gshown = g;
		this.ghead.textContent = this.o.groups.label(g);
		this.ghead.parentNode.parentNode.setAttribute("data-group", g);
	}
};

Table.prototype.refresh = function (resort) {
	if (resort)
		this.sortItems();
	this.draw(true);
};

Table.prototype.indexOfRow = function (r) {
	for (var i = 0; i < this.items.length; i++)
		if (this.items[i] >= 0 && this.o.rows[this.items[i]] === r)
			return i;
	return -1;
};

// Scrolls so that row r sits just below the sticky headings (padding the end of the table when
// the row is near its end) and marks it as the target. Returns false when r is not shown.
Table.prototype.scrollToRow = function (r, mark) {
	var t = this, i = t.indexOfRow(r);
	if (i < 0)
		return false;
	t.measure();
	if (mark !== false)
		t.target = r;
	var headH = t.thead.getBoundingClientRect().height;
	var need = i * t.rowH + t.root.clientHeight - (headH + t.items.length * t.rowH);
	t.extraPad = Math.max(0, Math.ceil(need));
	t.draw(true);
	t.root.scrollTop = i * t.rowH;
	t.draw(true);
	return true;
};

Table.prototype.setTarget = function (r) {
	this.target = r;
	var old = this.tbody.querySelectorAll("tr.target");
	for (var i = 0; i < old.length; i++)
		old[i].classList.remove("target");
	var tr = this.tbody.querySelector('tr[data-row="' + r + '"]');
	if (tr)
		tr.classList.add("target");
};
