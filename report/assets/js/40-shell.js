// SPDX-License-Identifier: MIT
// The page frame: sidebar (views, source snapshots), header (run facts with help links, process
// selector, theme), hash routing with back/forward, and the small popover menu.
//
// Routes: #overview, #files, #functions, #flame, #memory, #gpu, #spark, #spark/I, #child/I,
// #source/S and #source/S/LINE (a permalink; LINE counts lines of the source's text, which for a
// notebook runs through its cells). "?p=I" selects process I, "?g=G" every process of
// host or rank G (default: all processes combined).

var UI = {
	mode: "self",	     // Time shows own ("self") or inclusive ("total") time
	hotOnly: false,	     // source views list only lines with a measurement
	heat: {},	     // heatmap choice per table kind ("source", "functions", "files")
	view: null,	     // controller of the view on screen
	route: null,
};

var VIEWS = {}; // name -> {label, icon, when(), render(root, route) -> controller}

function route() {
	return parseRoute(location.hash);
}

function parseRoute(hash) {
	var h = (hash || "").replace(/^#/, ""), q = h.indexOf("?");
	var path = q >= 0 ? h.slice(0, q) : h, params = new URLSearchParams(q >= 0 ? h.slice(q + 1) : "");
	var parts = path.split("/");
	var p = params.get("p"), g = params.get("g");
	return {view: parts[0] || "overview", a: parts[1], b: parts[2], path: path,
		p: p !== null && /^\d{1,9}$/.test(p) ? Number(p)
		 : g !== null && /^\d{1,9}$/.test(g) ? -2 - Number(g) : -1};
}

// The route's query for a selection: ?p=N for one process, ?g=N for a host's or a rank's.
function selQuery(key) {
	return key >= 0 ? "?p=" + key : key <= -2 ? "?g=" + (-2 - key) : "";
}

// A link target inside the report, keeping the process selection.
function href(path) {
	return "#" + path + selQuery(SEL);
}

function srcHref(s, line) {
	return href("source/" + s + (isNum(line) ? "/" + line : ""));
}

function srcLink(s, line, text, cls) {
	if (!isNum(s) || !D.sources[s])
		return el("span", {class: "muted"}, text || DASH);
	return el("a", {class: "loc" + (cls ? " " + cls : ""), href: srcHref(s, line),
			title: (D.sources[s].path || "") + (isNum(line) ? ":" + shownLine(s, line) : "")},
		  text || locText(s, line));
}

// Remembers where the current view was scrolled, in the current history entry, so that the
// browser's back button returns to the same place.
function saveScroll() {
	var v = UI.view;
	if (!v || !v.state)
		return;
	try {
		history.replaceState({ls: v.state(), path: UI.route && UI.route.path}, "", location.href);
	} catch (e) {
		// a history that refuses state only loses the scroll position
	}
}

// Keeps the history entry's saved position current while the user scrolls, so that leaving
// with the browser's back button and coming forward again lands at the same place.
function watchScroll(scroller) {
	var v = null, timer = 0;
	scroller.addEventListener("scroll", function () {
		v = v || UI.view;
		clearTimeout(timer);
		timer = setTimeout(function () {
			if (UI.view === v && UI.route && route().path === UI.route.path)
				saveScroll();
		}, 200);
	}, {passive: true});
}

// ---- header -------------------------------------------------------------------------------

function fact(anchor, key, value, cls, title) {
	return helpLink(anchor, {class: "fact" + (cls ? " " + cls : ""), title: title || null,
				 "data-fact": anchor},
			el("span", {class: "k"}, key), el("span", {class: "v"}, value),
			el("span", {class: "ext", "aria-hidden": "true"}, "\u2197"));
}

// The profiler's own cost, for the Collector fact's details.
function costText(c) {
	if (!c)
		return "Cost not recorded";
	var t = "BPF " + fmtTime(c.bpf_time_s) + " in " + fmtCount(c.bpf_runs) + " program runs";
	if (isNum(c.collector_cpu_s))
		t += "; collector " + fmtTime(c.collector_cpu_s) + " CPU (" +
		     (100 * c.collector_share).toFixed(1) + "% of one core)";
	if (isNum(c.collector_setup_cpu_s))
		t += ", " + fmtTime(c.collector_setup_cpu_s) + " setting up";
	(c.programs || []).slice(0, 4).forEach(function (p, i) {
		t += (i ? ", " : ". Busiest: ") + p.name + " " + fmtTime(p.time_s);
	});
	return t;
}

function buildHeader() {
	var r = D.run, facts = el("div", {class: "facts"});
	var status = r.status || "Success";
	var sv = el("span", null, el("i", {class: "dot " + (status === "Failed" ? "bad" : status === "Reference" ? "ref" : "ok")}),
		    status, r.status_detail ? el("span", {class: "sub"}, " (" + r.status_detail + ")") : null);
	facts.appendChild(fact("run-status", "Run status", sv));
	facts.appendChild(fact("collection-method", "Collection method",
			       [r.method || DASH,
				r.mode ? el("span", {class: "sub"}, r.mode === "wall" ? " \u00b7 wall clock"
										  : " \u00b7 CPU time") : null]));
	facts.appendChild(fact("collector", "Collector", r.collector || DASH, null, costText(r.cost)));
	var sc = r.scope || {};
	var scopeText = (sc.kind ? sc.kind + " " : "") + (sc.text || "");
	var np = isNum(r.processes) ? r.processes : D.processes.length;
	facts.appendChild(fact("scope", "Scope",
			       [el("span", {class: "scopetext"}, scopeText || DASH),
				el("span", {class: "sub"}, " \u00b7 " + np + (np === 1 ? " process" : " processes") +
				   (isNum(r.threads) ? ", " + r.threads + (r.threads === 1 ? " thread" : " threads") : ""))],
			       null, scopeText));
	facts.appendChild(fact("elapsed", "Elapsed", fmtTime(r.elapsed_s), null,
			       r.started_at ? "Started at " + r.started_at : null));
	facts.appendChild(fact("samples", "Samples",
			       [fmtCount(r.samples),
				el("span", {class: "sub"}, " \u00b7 " + fmtRate(r.samples_per_s))],
			       null, "Samples of all processes; rate of the main process (" +
				     (isNum(r.frequency_hz) ? r.frequency_hz + " Hz requested" : "rate unknown") + ")"));
	var lost = r.lost || {};
	facts.appendChild(fact("lost-samples", "Lost", fmtCount(lost.total), lost.total > 0 ? "warn" : null,
			       (lostDetail(lost) || "No sample was lost") +
			       (isNum(r.taken) ? " (" + fmtCount(r.taken) + " taken by the kernel)" : "")));

	var select = el("select", {id: "proc-select", "aria-label": "Process"});
	select.appendChild(el("option", {value: "-1"}, "All processes (" + D.processes.length + ")"));
	["host", "rank"].forEach(function (kind) {
		var og = el("optgroup", {label: kind === "host" ? "Hosts" : "Ranks"});
		groups().forEach(function (g, k) {
			if (g.kind === kind)
				og.appendChild(el("option", {value: String(-2 - k)},
						  groupLabel(g) + " (" + g.procs.length + ")"));
		});
		if (og.children.length)
			select.appendChild(og);
	});
	var one = groups().length ? el("optgroup", {label: "Processes"}) : select;
	D.processes.forEach(function (p, i) {
		one.appendChild(el("option", {value: String(i)}, procLabel(i)));
	});
	if (one !== select)
		select.appendChild(one);
	select.addEventListener("change", function () {
		setProcess(Number(select.value));
	});
	var tools = el("div", {class: "tools"},
		       el("div", {class: "procpick"},
			  helpLink("processes", {class: "k"}, "Process \u2197"), select,
			  el("div", {class: "procinfo", id: "proc-info"})),
		       el("button", {type: "button", class: "iconbtn", id: "theme-toggle",
				     title: "Switch light / dark theme", "aria-label": "Switch light or dark theme",
				     on: {click: toggleTheme}}, "\u25d0"));
	return el("header", {class: "top"}, facts, tools);
}

function updateProcInfo() {
	var sel = document.getElementById("proc-select"), info = document.getElementById("proc-info");
	if (!sel || !info)
		return;
	sel.value = String(SEL);
	clear(info);
	if (SEL < 0) {
		var procs = SEL === -1 ? D.processes : groups()[-2 - SEL].procs.map(function (i) {
			return D.processes[i];
		});
		var py = procs.filter(function (p) {
			return p && p.python;
		}).length;
		info.textContent = procs.length > 1 || SEL !== -1 ? "combined; " + py + " of " + procs.length +
								     " ran Python" : "";
		return;
	}
	var p = D.processes[SEL];
	info.appendChild(el("span", null, p.python ? "Python " + p.python : "not Python"));
	if (p.note)
		info.appendChild(el("span", {class: "note"}, " \u00b7 " + p.note));
}

function setProcess(p) {
	if (!validSel(p))
		p = -1;
	if (p === SEL)
		return;
	SEL = p;
	var r = route();
	history.replaceState(null, "", "#" + r.path + selQuery(SEL));
	render();
}

// ---- theme --------------------------------------------------------------------------------

// <html data-theme> always names the theme (the dark palette is defined once, for it): the
// system preference, followed live until the toggle makes it the user's choice.
var themeChosen = false;

function initTheme() {
	var mq = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
	var follow = function () {
		if (!themeChosen)
			document.documentElement.setAttribute("data-theme", mq && mq.matches ? "dark" : "light");
	};
	if (mq && mq.addEventListener)
		mq.addEventListener("change", follow);
	follow();
}

function toggleTheme() {
	var root = document.documentElement;
	themeChosen = true;
	root.setAttribute("data-theme", root.getAttribute("data-theme") === "dark" ? "light" : "dark");
}

// ---- sidebar ------------------------------------------------------------------------------

function buildSidebar() {
	var nav = el("nav", {class: "views", "aria-label": "Report views"});
	Object.keys(VIEWS).forEach(function (k) {
		var v = VIEWS[k];
		if (v.hidden || (v.when && !v.when()))
			return;
		nav.appendChild(el("a", {href: "#" + k, "data-view": k, class: "navlink"},
				   el("span", {class: "ico", "aria-hidden": "true"}, v.icon), v.label));
	});
	var filter = el("input", {type: "search", class: "srcfilter", placeholder: "Find a source\u2026",
				  "aria-label": "Find a source"});
	var listEl = el("ul", {class: "srclist"});
	var srcs = [];
	for (var s = 0; s < D.sources.length; s++)
		if (isBrowsable(s))
			srcs.push(s);
	srcs.sort(function (a, b) {
		return SRC_RANK[a] - SRC_RANK[b];
	});
	// Thousands of snapshots: the first ones now, the rest after the first paint.
	var items = [], built = 0;
	function build(upto) {
		var frag = document.createDocumentFragment();
		for (; built < Math.min(upto, srcs.length); built++) {
			var s = srcs[built], src = D.sources[s];
			var li = el("li", null,
				    el("a", {href: href("source/" + s), "data-src": s, title: src.path || src.name,
					     class: UI.route && UI.route.view === "source" && UI.route.a === String(s) ? "active" : null},
				       el("span", {class: "kind " + src.kind, "aria-hidden": "true"},
					  src.kind === "notebook" ? "nb" : "py"),
				       el("span", {class: "nm"}, src.name)));
			frag.appendChild(li);
			items.push({li: li, text: (src.name + " " + (src.path || "")).toLowerCase()});
		}
		listEl.appendChild(frag);
	}
	function applyFilter() {
		var q = filter.value.trim().toLowerCase();
		items.forEach(function (it) {
			it.li.hidden = !!q && it.text.indexOf(q) < 0;
		});
	}
	build(200);
	(function more() {
		if (built >= srcs.length)
			return;
		setTimeout(function () {
			build(built + 500);
			applyFilter();
			more();
		}, 0);
	})();
	filter.addEventListener("input", function () {
		build(srcs.length);
		applyFilter();
	});
	return el("aside", {class: "side"},
		  el("a", {class: "brand", href: "#overview"},
		     el("span", {class: "logo", "aria-hidden": "true"}, "LS"),
		     el("span", {class: "word"}, "LineScope", el("b", null, "-BPF"))),
		  el("div", {class: "sidehead"}, "Report navigation"), nav,
		  el("div", {class: "sidehead"}, "Source snapshots ",
		     el("span", {class: "count"}, String(srcs.length))),
		  filter, listEl,
		  el("p", {class: "sidefoot"}, "This file embeds captured source code. ",
		     helpLink("sharing", null, "Sharing \u2197"),
		     D.run.tool ? el("span", {class: "tool"}, String(D.run.tool)) : null));
}

// Keeps the sidebar links in step with the process selection and the current route.
function updateSidebar(r) {
	var links = document.querySelectorAll(".side a[href^='#']");
	for (var i = 0; i < links.length; i++) {
		var a = links[i], v = a.getAttribute("data-view"), s = a.getAttribute("data-src");
		var path = v || (s !== null ? "source/" + s : null);
		if (!path)
			continue;
		a.setAttribute("href", href(path));
		var on = v ? r.view === v || (v === "spark" && r.view === "spark") ||
				     (v === "files" && r.view === "child")
			   : r.view === "source" && r.a === s;
		a.classList.toggle("active", on);
		if (on)
			a.setAttribute("aria-current", "page");
		else
			a.removeAttribute("aria-current");
	}
}

// ---- popover menu -------------------------------------------------------------------------

var popover = null;

function closeMenu() {
	if (popover) {
		popover.remove();
		popover = null;
	}
}

// Opens a small menu next to `anchor`; build(menu) fills it.
function openMenu(anchor, build) {
	closeMenu();
	popover = el("div", {class: "popover", role: "dialog"});
	build(popover);
	document.body.appendChild(popover);
	var r = anchor.getBoundingClientRect(), pw = popover.offsetWidth, ph = popover.offsetHeight;
	var x = Math.min(r.left, window.innerWidth - pw - 8), y = r.bottom + 4;
	if (y + ph > window.innerHeight - 8)
		y = Math.max(8, r.top - ph - 4);
	popover.style.left = Math.max(8, x) + "px";
	popover.style.top = y + "px";
	var f = popover.querySelector("a, button");
	if (f)
		f.focus({preventScroll: true});
}

document.addEventListener("mousedown", function (e) {
	if (popover && !popover.contains(e.target))
		closeMenu();
}, true);
document.addEventListener("keydown", function (e) {
	if (e.key === "Escape")
		closeMenu();
});

// ---- routing ------------------------------------------------------------------------------

var appMain = null;

function render() {
	var r = route();
	closeMenu();
	if (r.p !== SEL)
		SEL = validSel(r.p) ? r.p : -1;
	UI.route = r;
	updateProcInfo();
	updateSidebar(r);
	if (UI.view && UI.view.destroy)
		UI.view.destroy();
	UI.view = null;
	// a fresh element starts unscrolled without forcing a layout
	var fresh = el("main", {class: "content", id: "view"});
	appMain.replaceWith(fresh);
	appMain = fresh;
	var v = VIEWS[r.view];
	if (!v || (v.when && !v.when()))
		v = VIEWS.overview;
	document.title = (v === VIEWS.source && D.sources[Number(r.a)] ? D.sources[Number(r.a)].name + " \u2013 "
												  : v.label + " \u2013 ") + baseTitle;
	UI.view = v.render(appMain, r) || {};
	var st = history.state;
	if (st && st.ls && st.path === r.path && UI.view.restore)
		UI.view.restore(st.ls);
	else if (UI.view.enter)
		UI.view.enter(r);
	appMain.setAttribute("data-view", r.view);
}

var baseTitle = document.title;

// Internal links: save the scroll position first; a link to the current location re-runs the
// route (so following the same symbol link twice still scrolls to it).
document.addEventListener("click", function (e) {
	var a = e.target.closest && e.target.closest("a[href^='#']");
	if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey)
		return;
	if (a.classList.contains("lnum")) // opens the line menu; no navigation
		return;
	saveScroll();
	if (a.getAttribute("href") === location.hash) {
		e.preventDefault();
		render();
	}
}, true);

window.addEventListener("hashchange", render);

// Content blocks shared by the views.
function viewHead(title, sub, right) {
	return el("div", {class: "vhead"},
		  el("div", {class: "vtitle"}, el("h1", null, title), sub ? el("p", {class: "sub"}, sub) : null),
		  right ? el("div", {class: "vtools"}, right) : null);
}

// A segmented control: opts [{value, label}], current value, onChange(value).
function segmented(label, anchor, opts, cur, onChange, id) {
	var wrap = el("div", {class: "seg", role: "group", "aria-label": label, id: id || null});
	opts.forEach(function (o) {
		var b = el("button", {type: "button", "data-value": o.value, "aria-pressed": String(o.value === cur),
				      title: o.title || null}, o.label);
		b.addEventListener("click", function () {
			Array.prototype.forEach.call(wrap.querySelectorAll("button"), function (x) {
				x.setAttribute("aria-pressed", String(x === b));
			});
			onChange(o.value);
		});
		wrap.appendChild(b);
	});
	return el("div", {class: "control"},
		  anchor ? helpLink(anchor, {class: "clabel"}, label) : el("span", {class: "clabel"}, label),
		  wrap);
}

function toggle(label, checked, onChange, id, title) {
	var input = el("input", {type: "checkbox", id: id || null});
	input.checked = checked;
	input.addEventListener("change", function () {
		onChange(input.checked);
	});
	return el("label", {class: "toggle", title: title || null}, input, el("span", null, label));
}

function card(label, value, extra, cls) {
	return el("div", {class: "card" + (cls ? " " + cls : "")},
		  el("div", {class: "clabel"}, label), el("div", {class: "cvalue"}, value),
		  extra ? el("div", {class: "cextra"}, extra) : null);
}
