// SPDX-License-Identifier: MIT
// Rank comparison (a merged or distributed job): the hottest lines of the whole job, with each
// rank's own time on them, so that the rank that is slower on a line stands out. Ranks come from
// the processes' RANK; a profile with no ranks but several hosts compares hosts instead. With GPU
// work, the same for each line's GPU time and its NCCL (communication) part: the rank that waits
// least in a collective is the one the others wait for.

// The measures a rank comparison can show: the line column, and what its rows say.
var RANK_METRICS = [
	{value: "time_s", label: "Time", what: "Time"},
	{value: "gpu_s", label: "GPU time", what: "GPU time (device work launched)"},
	{value: "gpu_nccl_s", label: "NCCL", what: "Communication time (NCCL kernels)"}
];
var rankMetric = "time_s";

// {group: [index into labels per process, or -1], labels, sel: [the selection key of each],
// byRank} over groups(): the ranks, or the hosts when no two ranks are set; null when fewer than two
function rankGroups() {
	var all = groups(), byRank = all.some(function (g) {
		return g.kind === "rank";
	});
	var G = {group: new Int32Array(D.processes.length).fill(-1), labels: [], sel: [], byRank: byRank};
	all.forEach(function (g, k) {
		if (g.kind !== (byRank ? "rank" : "host"))
			return;
		var hosts = new Set(g.procs.map(function (i) {
			return D.processes[i] && D.processes[i].host;
		}));
		var host = byRank && multiHost() && hosts.size === 1 ? " (" + Array.from(hosts)[0] + ")" : "";
		g.procs.forEach(function (i) {
			G.group[i] = G.labels.length;
		});
		G.labels.push(groupLabel(g) + host);
		G.sel.push(-2 - k);
	});
	return G.labels.length < 2 ? null : G;
}

// The n hottest (src, line) of all groups by column col of the lines (time_s, gpu_s,
// gpu_nccl_s), each with its value per group; plus each group's total.
function rankRows(G, n, col) {
	var L = D.lines, rows = new Map(), total = new Float64Array(G.labels.length);
	var proc = list(L.proc), T = list(L[col || "time_s"]);
	for (var i = 0; i < proc.length; i++) {
		var g = G.group[proc[i]];
		if (!isNum(g) || g < 0 || !isNum(T[i]))
			continue;
		var key = L.src[i] * KEY_LINE + L.line[i], r = rows.get(key);
		if (!r) {
			r = {src: L.src[i], line: L.line[i], t: new Float64Array(G.labels.length), sum: 0};
			rows.set(key, r);
		}
		r.t[g] += T[i];
		r.sum += T[i];
		total[g] += T[i];
	}
	var all = total.reduce(function (a, b) {
		return a + b;
	}, 0);
	// lines under 1% of the job's time are noise for a comparison: a sample more or less
	var top = Array.from(rows.values()).filter(function (r) {
		return r.sum >= 0.01 * all;
	}).sort(function (a, b) {
		return b.sum - a.sum;
	}).slice(0, n);
	return {rows: top.filter(function (r) {
		return r.sum > 0;
	}), total: total};
}

// max / median of a row: how far its slowest group is from the typical one
function spread(t) {
	var v = Array.from(t).sort(function (a, b) {
		return a - b;
	});
	var mid = v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
	return mid > 0 ? v[v.length - 1] / mid : null;
}

function rankCells(tr, t) {
	var max = -1, at = -1;
	for (var g = 0; g < t.length; g++)
		if (t[g] > max) {
			max = t[g];
			at = g;
		}
	for (g = 0; g < t.length; g++)
		tr.appendChild(el("td", {class: "num" + (g === at && t.length > 1 && max > 0 ? " worst" : "")},
				  fmtTime(t[g])));
	var s = spread(t);
	tr.appendChild(el("td", {class: "num" + (s !== null && s >= 1.25 ? " bad" : "")},
			  s === null ? DASH : "\u00d7" + s.toFixed(2)));
}

// The metrics the lines have values for (GPU ones only with GPU work).
function rankMetrics() {
	return RANK_METRICS.filter(function (x) {
		return list(D.lines[x.value]).some(function (v) {
			return isNum(v) && v > 0;
		}) || x.value === "time_s";
	});
}

// The comparison table of one metric.
function rankTable(G, col) {
	var R = rankRows(G, 15, col), M = RANK_METRICS.filter(function (x) {
		return x.value === col;
	})[0];
	var head = el("tr", null, el("th", null, "Line"));
	G.labels.forEach(function (l, g) {
		head.appendChild(el("th", {class: "num"},
				    el("a", {href: "#overview" + selQuery(G.sel[g]),
					     title: "Show only the processes of " + l}, l)));
	});
	var most = col === "time_s" ? "slowest" : "largest";
	head.appendChild(el("th", {class: "num", title: "The " + most + " " + (G.byRank ? "rank" : "host") +
				  "'s value over the median's"}, most[0].toUpperCase() + most.slice(1) + " / median"));
	var body = el("tbody");
	var all = el("tr", {class: "total"}, el("td", null, "All lines"));
	rankCells(all, R.total);
	body.appendChild(all);
	R.rows.forEach(function (r) {
		var tr = el("tr", null, el("td", null, srcLink(r.src, r.line)));
		rankCells(tr, r.t);
		body.appendChild(tr);
	});
	return el("div", null,
		  el("p", {class: "muted"}, M.what + " on the job's hottest lines, per " + (G.byRank ? "rank" : "host") +
		     "; the " + most + " of each row is marked."),
		  el("table", {class: "grid ranks", "data-metric": col}, el("thead", null, head), body));
}

// The section, or null when the profile has fewer than two ranks (or hosts).
function rankSection() {
	var G = rankGroups();
	if (!G)
		return null;
	var metrics = rankMetrics(), box = el("div");
	if (!metrics.some(function (x) {
		return x.value === rankMetric;
	}))
		rankMetric = "time_s";
	var draw = function () {
		clear(box);
		box.appendChild(rankTable(G, rankMetric));
	};
	var head = el("div", {class: "sechead"}, el("h2", null, G.byRank ? "Ranks" : "Hosts"),
		      metrics.length > 1 ? segmented("Compare", null, metrics, rankMetric, function (v) {
			      rankMetric = v;
			      draw();
		      }, "rankmetric") : null,
		      helpLink("ranks", {class: "more"}, "About ranks \u2197"));
	draw();
	return el("div", {class: "ranks"}, head, box);
}
