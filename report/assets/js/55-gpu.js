// SPDX-License-Identifier: MIT
// GPU: device cards, attributed GPU time (kept apart from wall time and driver time), sampled
// memory peaks and the lines with device work.

VIEWS.gpu = {label: "GPU", icon: "\u25a3", when: hasGpu, render: renderGpu};

function renderGpu(root, r) {
	var ctl = pageView(root), m = sel(), G = D.gpu || {};
	root.appendChild(viewHead("GPU", "Which source lines have sampled device work and GPU memory?",
				  helpLink("gpu", {class: "more"}, "About GPU measurements \u2197")));
	var gpuT = sumOf(m.gpu_s), drv = sumOf(m.driver_s), peak = NaN;
	for (var i = 0; m.gpu_peak_mem && i < m.n; i++)
		if (m.gpu_peak_mem[i] === m.gpu_peak_mem[i] && !(m.gpu_peak_mem[i] <= peak))
			peak = m.gpu_peak_mem[i];
	var cards = el("div", {class: "cards"});
	cards.appendChild(card("Attributed GPU time", fmtTime(gpuT), "sum of line estimates; not part of wall time"));
	cards.appendChild(card("GPU peak memory", fmtBytes(peak), "highest sampled device memory"));
	cards.appendChild(card("Driver time", fmtTime(drv), "host time in the driver; can overlap GPU time"));
	cards.appendChild(card("Elapsed wall time", fmtTime(D.run.elapsed_s), "for comparison only; never added"));
	root.appendChild(cards);

	var devs = list(G.devices);
	if (devs.length) {
		root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Devices")));
		var dl = el("div", {class: "devices"});
		devs.forEach(function (d, k) {
			var c = el("div", {class: "card device"},
				   el("div", {class: "clabel"}, "GPU " + (isNum(d.index) ? d.index : k)),
				   el("div", {class: "dname"}, d.name || DASH),
				   el("dl", null,
				      el("dt", null, "Memory"), el("dd", null, fmtBytes(d.memory_total)),
				      el("dt", null, "Peak sampled"), el("dd", null, fmtBytes(d.peak_mem)),
				      el("dt", null, "Driver"), el("dd", null, d.driver || DASH),
				      el("dt", null, "CUDA"), el("dd", null, d.cuda || DASH)));
			if (d.memory_note)
				c.appendChild(el("p", {class: "notice bad"}, "Device memory unavailable: " + d.memory_note));
			dl.appendChild(c);
		});
		root.appendChild(dl);
	}
	var notes = list(G.notes);
	if (notes.length)
		root.appendChild(el("ul", {class: "notes"}, notes.map(function (n) {
			return el("li", null, String(n));
		})));

	var rows = [];
	for (i = 0; i < m.n; i++)
		if ((m.gpu_s && m.gpu_s[i] === m.gpu_s[i]) || (m.gpu_peak_mem && m.gpu_peak_mem[i] === m.gpu_peak_mem[i]) ||
		    (m.driver_s && m.driver_s[i] === m.driver_s[i]))
			rows.push(i);
	root.appendChild(el("div", {class: "sechead"}, el("h2", null, "Lines with device work"),
			    el("span", {class: "sub"}, fmtCount(rows.length) + " lines")));
	var g = lineGetters(m), gs = g.src, gl = g.line, loc = colLocFor(rows, gs, gl);
	var cols = [colTime("gpu", "GPU time", function (x) {
		return m.gpu_s ? m.gpu_s[x] : NaN;
	}, "Sampled device work attributed to the launching line"), loc,
		    colBytes("gpumem", "GPU peak memory", function (x) {
			    return m.gpu_peak_mem ? m.gpu_peak_mem[x] : NaN;
		    }), colTime("driver", "Driver time", function (x) {
			    return m.driver_s ? m.driver_s[x] : NaN;
		    }), colTime("native", "Launched for it", function (x) {
			    return m.gpu_native_s ? m.gpu_native_s[x] : NaN;
		    }, "Part of GPU time that a native thread launched while this line waited for it " +
		       "(autograd's device threads in loss.backward())"),
		    colTime("nccl", "NCCL", function (x) {
			    return m.gpu_nccl_s ? m.gpu_nccl_s[x] : NaN;
		    }, "Part of GPU time in NCCL kernels (communication)"), colCode(gs, gl)];
	var t = new Table({columns: cols, rows: rows, sort: {id: "gpu", dir: -1}, cls: "index gpulines",
			   minW: sourceMinW(rows, gs, gl), empty: "No line has GPU measurements in this selection."});
	t.root.classList.add("bounded");
	root.appendChild(t.root);
	t.draw(true);
	watchScroll(root);
	return ctl;
}
