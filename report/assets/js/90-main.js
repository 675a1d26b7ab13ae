// SPDX-License-Identifier: MIT
// Start-up: parse the embedded data once, build the frame, render the view the address names.

function mark(name) {
	if (window.performance && performance.mark)
		performance.mark(name);
}

function boot() {
	var app = document.getElementById("app");
	mark("ls-start");
	initTheme();
	try {
		loadData();
		mark("ls-parsed");
	} catch (e) {
		app.appendChild(el("div", {class: "fatal"}, el("h1", null, "This report cannot be shown"),
				   el("p", null, String(e && e.message ? e.message : e))));
		document.documentElement.setAttribute("data-ready", "error");
		return;
	}
	measureFonts();
	var r = parseRoute(location.hash);
	if (validSel(r.p))
		SEL = r.p;
	sel();
	mark("ls-model");
	appMain = el("main", {class: "content", id: "view"});
	app.appendChild(buildSidebar());
	app.appendChild(el("div", {class: "main"}, buildHeader(), appMain));
	render();
	document.documentElement.setAttribute("data-ready", "1");
	// Marks for bench/report-open: the view is built, and the frame after it has been painted.
	if (window.performance && performance.mark) {
		performance.mark("ls-ready");
		requestAnimationFrame(function () {
			setTimeout(function () {
				performance.mark("ls-painted");
			}, 0);
		});
	}
}

boot();
