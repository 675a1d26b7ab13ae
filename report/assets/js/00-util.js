// SPDX-License-Identifier: MIT
// Shared helpers of the report front-end. The files in report/assets/js are concatenated in
// name order into one strict-mode function (report/module.mk), so top-level names here are
// private to the report. Profile text only ever reaches the page through text nodes and
// attribute values set with setAttribute(): nothing from the data is parsed as HTML.

// Help links (the only remote URLs; they open in a new tab and are never fetched by the report).
var DOCS_BASE = "https://github.com/linescope/linescope-bpf/blob/main/docs/report.md";
var DASH = "\u2013";

function docsUrl(anchor) {
	return DOCS_BASE + "#" + anchor;
}

// el("a", {class: "x", href: "#files", on: {click: f}}, "text", child, [more]) builds an element.
// Strings become text nodes; null, undefined and false children are skipped.
function el(tag, props) {
	var node = document.createElement(tag);
	if (props) {
		for (var k in props) {
			var v = props[k];
			if (v === null || v === undefined || v === false)
				continue;
			if (k === "class")
				node.className = v;
			else if (k === "text")
				node.textContent = v;
			else if (k === "on")
				for (var ev in v)
					node.addEventListener(ev, v[ev]);
			else if (k === "style")
				node.style.cssText = v;
			else
				node.setAttribute(k, v === true ? "" : String(v));
		}
	}
	for (var i = 2; i < arguments.length; i++)
		append(node, arguments[i]);
	return node;
}

function append(node, kid) {
	if (kid === null || kid === undefined || kid === false)
		return;
	if (Array.isArray(kid)) {
		for (var i = 0; i < kid.length; i++)
			append(node, kid[i]);
	} else if (typeof kid === "object") {
		node.appendChild(kid);
	} else {
		node.appendChild(document.createTextNode(String(kid)));
	}
}

function clear(node) {
	while (node.firstChild)
		node.removeChild(node.firstChild);
	return node;
}

// A link to a section of the user guide, in a new tab, carrying no referrer.
function helpLink(anchor, props) {
	var p = props || {};
	p.href = docsUrl(anchor);
	p.target = "_blank";
	p.rel = "noopener noreferrer";
	return el.apply(null, ["a", p].concat(Array.prototype.slice.call(arguments, 2)));
}

function isNum(v) {
	return typeof v === "number" && v === v;
}

// ---- number formatting --------------------------------------------------------------------

var NF0 = new Intl.NumberFormat("en-US", {maximumFractionDigits: 0});
var NF1 = new Intl.NumberFormat("en-US", {minimumFractionDigits: 1, maximumFractionDigits: 1});

function fmtCount(n) {
	return isNum(n) ? NF0.format(n) : DASH;
}

function fixed(v) {
	var a = Math.abs(v);
	return v.toFixed(a < 10 ? 2 : a < 100 ? 1 : 0);
}

// Seconds, in the unit that keeps 3-4 significant digits ("952.2 µs", "30.10 ms", "12.50 s").
function fmtTime(s) {
	if (!isNum(s))
		return DASH;
	if (s === 0)
		return "0 s";
	var a = Math.abs(s);
	if (a >= 1000)
		return NF0.format(s) + " s";
	if (a >= 1)
		return fixed(s) + " s";
	if (a >= 1e-3)
		return fixed(s * 1e3) + " ms";
	if (a >= 1e-6)
		return fixed(s * 1e6) + " \u00b5s";
	return fixed(s * 1e9) + " ns";
}

// Bytes in decimal units: 1 KB = 1,000 bytes. signed adds "+" to positive changes.
function fmtBytes(b, signed) {
	if (!isNum(b))
		return DASH;
	var sign = b < 0 ? "-" : signed && b > 0 ? "+" : "";
	var a = Math.abs(b);
	var units = ["B", "KB", "MB", "GB", "TB", "PB"];
	var u = 0;
	while (a >= 1000 && u < units.length - 1) {
		a /= 1000;
		u++;
	}
	return sign + (u === 0 ? NF0.format(a) : NF1.format(a)) + " " + units[u];
}

function fmtPct(f) {
	return isNum(f) ? (f * 100).toFixed(f >= 0.1 ? 0 : 1) + "%" : DASH;
}

function fmtRate(r) {
	return isNum(r) ? NF1.format(r) + "/s" : DASH;
}

var COLLATOR = new Intl.Collator("en", {numeric: true, sensitivity: "base"});

// Approximate display width of a source line in monospace cells (tabs to 8, wide scripts as 2).
function textCells(s) {
	var w = 0;
	for (var i = 0; i < s.length; i++) {
		var c = s.charCodeAt(i);
		if (c === 9)
			w += 8 - (w % 8);
		else if (c >= 0x1100 && (c <= 0x115f || (c >= 0x2e80 && c <= 0xa4cf) ||
					  (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
					  (c >= 0xff00 && c <= 0xff60)))
			w += 2;
		else if (c < 0xdc00 || c > 0xdfff)
			w += 1;
	}
	return w;
}

// Copies text to the clipboard; file:// pages are a secure context in Chromium, and the
// textarea fallback covers browsers that refuse the asynchronous API.
function copyText(text, done) {
	function fallback() {
		var ta = el("textarea", {class: "clip", readonly: true});
		ta.value = text;
		document.body.appendChild(ta);
		ta.select();
		var ok = false;
		try {
			ok = document.execCommand("copy");
		} catch (e) {
			ok = false;
		}
		document.body.removeChild(ta);
		if (done)
			done(ok);
	}
	if (navigator.clipboard && navigator.clipboard.writeText)
		navigator.clipboard.writeText(text).then(function () {
			if (done)
				done(true);
		}, fallback);
	else
		fallback();
}
