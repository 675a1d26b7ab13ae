// SPDX-License-Identifier: MIT
// Browser tests of the HTML report, run on fixtures that the real ls_html__write() wrapped
// (report/module.mk builds them). Expected values are computed here from the fixture JSON.
// Usage: node run.js DIR [NAME-FILTER]
'use strict';

const fs = require('fs');
const path = require('path');
const { Harness, assert, eq, tableRows, clickSort, sortState, expectedOrder, combinedLines,
	readFixture } = require('./lib');

const dir = process.argv[2];
const filter = process.argv[3];
const H = new Harness(dir);
const FIX = readFixture(dir, 'fixture.json');
const PLAIN = readFixture(dir, 'plain.json');
const SHOTS = path.join(__dirname, 'screenshots');
const SRC = '.content .tscroll';

const APP = 0, UTIL = 1, TOOLS = 2, WORKER = 3, NB = 4;
const textLines = (s) => FIX.sources[s].text.replace(/\n$/, '').split('\n');
const lineOf = (s, needle, nth = 0) => {
	let n = 0;
	const ls = textLines(s);
	for (let i = 0; i < ls.length; i++)
		if (ls[i].includes(needle) && n++ === nth)
			return i + 1;
	throw new Error('no line with ' + needle);
};
const ALL = combinedLines(FIX);
const val = (s, line, col) => {
	const r = ALL.get(s + ':' + line);
	return r && r[col] !== undefined ? r[col] : null;
};

// "app.py:27", or "analysis.ipynb Cell 3:1" in a notebook, as the report writes locations.
function locText(s, line) {
	const src = FIX.sources[s];
	const c = (src.cells || []).find((x) => x.first <= line && line < x.first + x.nlines);
	return c ? `${src.name} ${c.label}${c.revision ? ` (${c.revision})` : ''}:${line - c.first + 1}` : `${src.name}:${line}`;
}

async function openSrc(page, s, line, file) {
	await H.open(page, file || 'fixture.html', '#source/' + s + (line ? '/' + line : ''));
}

// Order of a column of the app.py table, checked both ways against the fixture's values.
async function checkSort(page, s, col, getter) {
	const n = textLines(s).length;
	const items = [];
	for (let l = 1; l <= n; l++)
		items.push({ id: l, k: l, v: getter(l) });
	await clickSort(page, SRC, col);
	const first = await sortState(page, SRC, col);
	const dir1 = first === 'ascending' ? 1 : -1;
	eq((await tableRows(page, SRC)).map((r) => r.row), expectedOrder(items, dir1),
	   `${col}: order after the first click (${first})`);
	await clickSort(page, SRC, col);
	eq(await sortState(page, SRC, col), dir1 > 0 ? 'descending' : 'ascending', `${col}: second click reverses`);
	eq((await tableRows(page, SRC)).map((r) => r.row), expectedOrder(items, -dir1),
	   `${col}: order after the second click`);
	return dir1;
}

// ---- start-up, header, escaping --------------------------------------------------------------

H.test('opens offline with header facts linking to the guide', async (page) => {
	await H.open(page, 'fixture.html');
	const facts = await page.$$eval('header a.fact', (as) => as.map((a) => ({
		fact: a.dataset.fact, text: a.textContent, href: a.href, target: a.target, rel: a.rel })));
	eq(facts.map((f) => f.fact), ['run-status', 'collection-method', 'collector', 'scope', 'elapsed', 'samples',
				      'lost-samples'], 'header facts in order');
	for (const f of facts) {
		eq(f.href, 'https://github.com/linescope/linescope-bpf/blob/main/docs/report.md#' + f.fact,
		   'help link of ' + f.fact);
		eq([f.target, f.rel], ['_blank', 'noopener noreferrer'], 'help links open a new tab');
	}
	assert(facts[0].text.includes('Success'), 'run status shown');
	assert(facts[1].text.includes('Mixed collection'), 'collection method shown');
	assert(facts[2].text.includes('bpf-sampling+usdt-tracing'), 'collector shown');
	const cost = await page.$eval('header a.fact[data-fact="collector"]', (a) => a.title);
	assert(cost.includes('BPF') && cost.includes('25,000 program runs') && cost.includes('2.0% of one core') &&
	       cost.includes('handle_sample'), 'the collector fact details our own cost: ' + cost);
	assert(facts[3].text.includes(`4 processes, ${FIX.run.threads} threads`),
	       'scope shows processes and threads: ' + facts[3].text);
	assert(facts[4].text.includes('12.5 s'), 'elapsed shown');
	assert(facts[5].text.includes('13,800') && facts[5].text.includes('728.0/s'), 'samples and rate shown');
	assert(facts[6].text.includes('7'), 'lost samples shown');
	const notice = await page.textContent('.notice.embed');
	assert(/embeds source code/.test(notice), 'the report says it embeds source code');
	// anchors exist in the user guide
	const guide = fs.readFileSync(path.join(__dirname, '../../docs/report.md'), 'utf8');
	const anchors = await page.$$eval('a[href^="https://github.com/linescope"]', (as) =>
		[...new Set(as.map((a) => a.href.split('#')[1]))]);
	for (const a of anchors)
		assert(guide.includes(`<a id="${a}"></a>`), 'docs/report.md lacks the anchor ' + a);
	// exactly one data block, which parses
	const blocks = await page.$$eval('script[type="application/json"]', (s) => s.length);
	eq(blocks, 1, 'one data block');
	// the report's code has no way to reach the network, and names no remote URL but the guide
	const code = await page.evaluate(() => document.scripts[1].textContent);
	for (const api of ['fetch(', 'XMLHttpRequest', 'WebSocket', 'sendBeacon', 'EventSource', 'import(', 'innerHTML',
			   'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function'])
		assert(!code.includes(api), 'the report script uses ' + api);
	const urls = code.match(/https?:\/\/[^"'\s)]+/g) || [];
	// (the SVG namespace is an identifier, never fetched)
	eq([...new Set(urls)].filter((u) => u !== 'http://www.w3.org/2000/svg'),
	   ['https://github.com/linescope/linescope-bpf/blob/main/docs/report.md'], 'remote URLs');
	const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
	assert(/default-src 'none'/.test(csp) && /script-src 'sha256-/.test(csp), 'CSP forbids network and foreign scripts');
	const nav = await page.$$eval('nav.views a', (as) => as.map((a) => a.textContent.trim()));
	eq(nav, ['◈Overview', '▤Files', 'ƒFunctions', '▃Flame graph', '▦Memory', '▣GPU', '✦Spark'],
	   'views with data are listed');
});

H.test('profile text is shown as text and runs nothing', async (page) => {
	await openSrc(page, APP);
	const rows = await tableRows(page, SRC);
	eq(rows.length, textLines(APP).length, 'one row per line (U+2028 does not split a line)');
	const code = Object.fromEntries(rows.map((r) => [r.row, r.cells.source]));
	const banner = lineOf(APP, 'BANNER');
	eq(code[banner], 'BANNER = "</script><script>window.__pwned = 1</script>"', '</script> shown as text');
	eq(code[lineOf(APP, 'PAYLOAD')], 'PAYLOAD = \'<img src=x onerror="window.__pwned=2">\'', 'img tag shown as text');
	eq(code[lineOf(APP, 'SEPARATOR')], 'SEPARATOR = "a\u2028b\u2029c"', 'U+2028/U+2029 kept inside the line');
	eq(code[lineOf(APP, 'BROKEN')], 'BROKEN = "bad bytes: \ufffd\ufffd and \ufffd here"',
	   'invalid UTF-8 replaced by U+FFFD (one per maximal subpart)');
	assert(code[3].includes('</script>') && code[3].includes('<img src=x onerror=alert(1)>'), 'docstring text');
	const scripts = await page.$$eval('script', (s) => s.length);
	eq(scripts, 2, 'only the data block and the report script exist');
});

// ---- sorting -----------------------------------------------------------------------------------

H.test('source table sorts every kind of column both ways', async (page) => {
	await openSrc(page, APP);
	// starts in line order, Source ascending
	eq(await sortState(page, SRC, 'source'), 'ascending', 'source tables start in line order');
	eq((await tableRows(page, SRC)).map((r) => r.row), textLines(APP).map((_, i) => i + 1), 'line order');
	// the line-number column has no sort control
	eq(await page.$$eval(`${SRC} th[data-col="ln"] button`, (b) => b.length), 0, 'no sort control on line numbers');
	const d = await checkSort(page, APP, 'time', (l) => val(APP, l, 'time_s'));
	eq(d, -1, 'measurements start with the largest');
	// ties keep line order in both directions: two lines share 250 ms
	const tie = [lineOf(APP, 'rows = load_rows(n)'), lineOf(APP, 's = summarize(rows)')];
	assert(val(APP, tie[0], 'time_s') === val(APP, tie[1], 'time_s'), 'fixture has a tie');
	const ord = (await tableRows(page, SRC)).map((r) => r.row);
	assert(ord.indexOf(tie[0]) < ord.indexOf(tie[1]), 'ties keep line order (ascending)');
	// unknown time last in both directions (also checked by expectedOrder)
	eq(ord[ord.length - 1], textLines(APP).length, 'unknown values last');
	await checkSort(page, APP, 'samples', (l) => val(APP, l, 'samples') === null ? 0 : val(APP, l, 'samples'));
	await checkSort(page, APP, 'memchange', (l) => val(APP, l, 'mem_change'));
	await checkSort(page, APP, 'peakmem', (l) => val(APP, l, 'peak_mem'));
	await checkSort(page, APP, 'gpu', (l) => val(APP, l, 'gpu_s'));
	await checkSort(page, APP, 'wait', (l) => val(APP, l, 'wait_s'));
	// Source restores line order, then reverses it
	await clickSort(page, SRC, 'source');
	eq((await tableRows(page, SRC)).map((r) => r.row), textLines(APP).map((_, i) => i + 1), 'Source restores order');
	await clickSort(page, SRC, 'source');
	eq((await tableRows(page, SRC)).map((r) => r.row), textLines(APP).map((_, i) => i + 1).reverse(),
	   'Source again reverses line order');
	const arrow = await page.textContent(`${SRC} th[data-col="source"] .arrow`);
	eq(arrow, '↓', 'arrow shows the direction');
	// another file starts in line order again
	await clickSort(page, SRC, 'time');
	await page.click(`.side a[data-src="${WORKER}"]`);
	await page.waitForFunction((h) => location.hash === h, '#source/' + WORKER);
	eq(await sortState(page, SRC, 'source'), 'ascending', 'a newly opened source starts in line order');
	// the sidebar filter finds sources by name or path
	await page.fill('.srcfilter', 'tools/');
	eq(await page.$$eval('.srclist li:not([hidden]) a', (as) => as.map((a) => a.title)), ['/home/u/proj/tools/util.py'],
	   'filter by path');
});

H.test('functions and files sort by name, location and time', async (page) => {
	await H.open(page, 'fixture.html', '#functions');
	eq(await sortState(page, SRC, 'time'), 'descending', 'Functions start by highest time');
	let rows = await tableRows(page, SRC);
	const F = FIX.functions;
	// combined over processes by (src, def line, name)
	const fns = new Map();
	F.src.forEach((s, i) => {
		const k = s + ':' + F.def_line[i] + ':' + F.name[i];
		const r = fns.get(k) || { s, def: F.def_line[i], name: F.name[i], t: null };
		if (typeof F.time_s[i] === 'number')
			r.t = (r.t || 0) + F.time_s[i];
		fns.set(k, r);
	});
	eq(rows.length, fns.size, 'one row per function');
	const tOf = (r) => {
		const f = [...fns.values()].find((x) => x.name === r.cells.source && locText(x.s, x.def) === r.cells.loc);
		assert(f, 'unexpected function row ' + r.cells.loc + ' ' + r.cells.source);
		return f.t;
	};
	for (let i = 1; i < rows.length; i++)
		assert(tOf(rows[i]) === null || tOf(rows[i - 1]) >= tOf(rows[i]), 'function time order at ' + i);
	await clickSort(page, SRC, 'source');
	eq(await sortState(page, SRC, 'source'), 'ascending', 'names start ascending');
	rows = await tableRows(page, SRC);
	const byName = rows.map((r) => r.cells.source);
	eq(byName, [...byName].sort((a, b) => a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' })),
	   'names alphabetically');
	await clickSort(page, SRC, 'source');
	const rev = (await tableRows(page, SRC)).map((r) => r.cells.source);
	eq(rev, [...byName].reverse().sort((a, b) => -a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' })),
	   'names reversed');
	await clickSort(page, SRC, 'loc');
	rows = await tableRows(page, SRC);
	// by file (name, then path: the two util.py stay apart), then by line
	const pos = await page.$$eval(`${SRC} td.locc a`, (as) => as.map((a) => a.getAttribute('href')));
	const keys = pos.map((h) => {
		const [, s, l] = /^#source\/(\d+)\/(\d+)/.exec(h);
		return [FIX.sources[s].name, FIX.sources[s].path, Number(l)];
	});
	const cmpKey = (a, b) => a[0].localeCompare(b[0], 'en', { sensitivity: 'base' }) || a[1].localeCompare(b[1]) || a[2] - b[2];
	eq(keys, [...keys].sort(cmpKey), 'locations by position in the file');
	// Lines: unknown last in both directions
	await clickSort(page, SRC, 'lines');
	rows = await tableRows(page, SRC);
	eq(rows[rows.length - 1].cells.lines, '–', 'unknown Lines last (descending)');
	await clickSort(page, SRC, 'lines');
	rows = await tableRows(page, SRC);
	eq(rows[rows.length - 1].cells.lines, '–', 'unknown Lines last (ascending)');

	await H.open(page, 'fixture.html', '#files');
	eq(await sortState(page, SRC, 'time'), 'descending', 'Files start by highest time');
	rows = await tableRows(page, SRC);
	eq(rows.map((r) => r.cells.loc), ['analysis.ipynb', 'app.py', 'util.py', 'worker.py', 'util.py'],
	   'files by time, same-name files distinct');
	const hrefs = await page.$$eval(`${SRC} td.locc a`, (as) => as.map((a) => a.getAttribute('href')));
	eq(new Set(hrefs).size, hrefs.length, 'files with the same name have distinct links');
	eq(rows.map((r) => r.cells.kind), ['Notebook', 'Python', 'Python', 'Python', 'Python'], 'Kind column');
});

// ---- heatmaps ---------------------------------------------------------------------------------

async function heated(page) {
	return (await tableRows(page, SRC)).filter((r) => /\b(heat|mheat)\b/.test(r.cls)).map((r) => r.row)
		.sort((a, b) => a - b);
}

H.test('heatmaps colour measured lines only, independently of sorting', async (page) => {
	await openSrc(page, APP);
	const n = textLines(APP).length, lines = [...Array(n).keys()].map((i) => i + 1);
	eq(await page.getAttribute('#heat-source button[aria-pressed="true"]', 'data-value'), 'time',
	   'source tables default to Time');
	eq(await heated(page), lines.filter((l) => val(APP, l, 'time_s') > 0), 'Time heat: lines with time > 0');
	await page.click('#heat-source button[data-value="mem"]');
	eq(await heated(page), lines.filter((l) => val(APP, l, 'mem_change') > 0),
	   'Mem Growth heat: positive changes only');
	const cls = await page.$$eval(`${SRC} tr.mheat`, (t) => t.length);
	assert(cls > 0, 'memory heat uses its own colours');
	await clickSort(page, SRC, 'time');
	eq(await heated(page), lines.filter((l) => val(APP, l, 'mem_change') > 0), 'sorting keeps the heatmap');
	eq(await page.getAttribute('#heat-source button[aria-pressed="true"]', 'data-value'), 'mem', 'choice kept');
	await page.click('#heat-source button[data-value="none"]');
	eq(await heated(page), [], 'None: no colour');
	// the scale is shared across files: util.py's hottest line is not at the top level
	await page.click('#heat-source button[data-value="time"]');
	await H.open(page, 'fixture.html', '#source/' + TOOLS);
	const lv = await page.$$eval(`${SRC} tr.heat`, (t) => t.map((x) => Number(/\bh(\d+)\b/.exec(x.className)[1])));
	let max = 0;
	for (const r of ALL.values())
		max = Math.max(max, r.time_s || 0);
	const toolsMax = Math.max(...[...ALL.values()].filter((r) => r.src === TOOLS).map((r) => r.time_s));
	eq(Math.max(...lv), Math.ceil((1 + Math.log10(toolsMax / max) / 3) * 10), 'log scale relative to the report maximum');

	await H.open(page, 'fixture.html', '#files');
	eq(await page.getAttribute('#heat-files button[aria-pressed="true"]', 'data-value'), 'none', 'Files default to None');
	eq(await page.$$eval(`${SRC} tr.heat`, (t) => t.length), 0, 'no heat by default');
	await page.click('#heat-files button[data-value="time"]');
	eq(await page.$$eval(`${SRC} tr.heat`, (t) => t.length), 5, 'Time heat on files');
	await H.open(page, 'fixture.html', '#functions');
	eq(await page.getAttribute('#heat-functions button[aria-pressed="true"]', 'data-value'), 'none',
	   'Functions default to None');
});

// ---- navigation --------------------------------------------------------------------------------

// Distance between a row's top and the bottom of the sticky headings of its table.
async function rowBelowHeads(page, line) {
	return page.evaluate((line) => {
		const root = document.querySelector('.content .tscroll');
		const tr = root.querySelector(`tbody tr[data-row="${line}"]`);
		if (!tr)
			return null;
		// the heading cells are sticky (the thead box itself scrolls away)
		const head = Math.max(...[...root.querySelectorAll('thead th')].map((th) => th.getBoundingClientRect().bottom));
		return tr.getBoundingClientRect().top - head;
	}, line);
}

H.test('symbol links go to the definition and back', async (page) => {
	await openSrc(page, APP);
	const from = lineOf(APP, 'rows = load_rows(n)');
	const link = page.locator(`${SRC} tr[data-row="${from}"] a.sym`);
	eq(await link.count(), 1, 'one link on the line');
	eq(await link.textContent(), 'load_rows', 'the link covers the symbol');
	const color = await link.evaluate((a) => getComputedStyle(a).textDecorationLine);
	assert(color.includes('underline'), 'linked symbols are underlined');
	const def = lineOf(UTIL, 'def load_rows');
	await link.click();
	await page.waitForFunction((h) => location.hash === h, '#source/' + UTIL + '/' + def);
	const d = await rowBelowHeads(page, def);
	assert(d !== null && Math.abs(d) <= 1.5, 'definition just below the headings: ' + d);
	eq(await page.getAttribute(`${SRC} tr[data-row="${def}"]`, 'class'), 'r target', 'definition marked');
	// two calls on one line are two links
	const multi = lineOf(APP, 'print(msg, checksum');
	eq(await page.evaluate(() => 0), 0, '');
	await page.goBack();
	await page.waitForFunction(() => location.hash.startsWith('#source/0'));
	const back = await page.evaluate((l) => !!document.querySelector(`.content .tscroll tr[data-row="${l}"]`), from);
	assert(back, 'back returns to the calling file');
	const links = await page.$$eval(`${SRC} tr[data-row="${multi}"] a.sym`, (as) => as.map((a) => a.textContent));
	eq(links, ['checksum', 'tail_helper', 'parse'], 'each call on a line is its own link');
	// a definition near the end of a long file still lands below the headings
	await page.click(`${SRC} tr[data-row="${multi}"] a.sym >> text=tail_helper`);
	const tail = lineOf(UTIL, 'def tail_helper');
	assert(tail > textLines(UTIL).length - 3, 'fixture: tail_helper is at the end of util.py');
	await page.waitForFunction((h) => location.hash === h, '#source/' + UTIL + '/' + tail);
	const d2 = await rowBelowHeads(page, tail);
	assert(d2 !== null && Math.abs(d2) <= 1.5, 'definition near the end just below the headings: ' + d2);
	await page.goBack();
	await page.waitForFunction(() => location.hash.startsWith('#source/0'));
	await page.goForward();
	await page.waitForFunction((h) => location.hash === h, '#source/' + UTIL + '/' + tail);
});

H.test('permalinks open at the line', async (page) => {
	const line = 300;
	await openSrc(page, UTIL, line);
	const d = await rowBelowHeads(page, line);
	assert(d !== null && Math.abs(d) <= 1.5, 'permalinked line below the headings: ' + d);
	eq(await page.$$eval(`${SRC} tr.target`, (t) => t.map((x) => Number(x.dataset.row))), [line], 'line marked');
	// the line number opens the line menu and shows the permalink without a jump
	await page.click(`${SRC} tr[data-row="${line + 2}"] a.lnum`);
	eq(await page.evaluate(() => location.hash), `#source/${UTIL}/${line + 2}`, 'address shows the permalink');
	// a second click on the same number opens the menu again (no navigation)
	await page.keyboard.press('Escape');
	await page.click(`${SRC} tr[data-row="${line + 2}"] a.lnum`);
	assert(await page.isVisible('.popover'), 'line menu opens again');
	await page.click('.popover button:has-text("Copy file:line")');
	await page.waitForFunction(() => document.querySelector('.popover button.btn').textContent === 'Copied');
	eq(await page.evaluate(() => navigator.clipboard.readText()), `/home/u/proj/pkg/util.py:${line + 2}`,
	   'file:line copied');
	// a permalink into a notebook cell, and to a process
	await H.open(page, 'fixture.html', `#source/${NB}/7?p=3`);
	eq(await page.$eval('#proc-select', (s) => s.value), '3', 'process from the permalink');
	eq(await page.$$eval(`${SRC} tr.target td.ln`, (t) => t.map((x) => x.textContent)), ['2'],
	   'notebook line numbers restart in every cell');
});

H.test('headings and title stay visible while the code scrolls', async (page) => {
	await openSrc(page, UTIL);
	const before = await page.evaluate(() => {
		const root = document.querySelector('.content .tscroll');
		return { head: root.querySelector('thead th').getBoundingClientRect().top, top: root.getBoundingClientRect().top };
	});
	await page.evaluate(() => {
		const root = document.querySelector('.content .tscroll');
		root.scrollTop = root.scrollHeight;
	});
	await page.waitForTimeout(100);
	const after = await page.evaluate(() => {
		const root = document.querySelector('.content .tscroll');
		const h1 = document.querySelector('.content h1').getBoundingClientRect();
		const total = document.querySelector('#src-total').getBoundingClientRect();
		const rows = root.querySelectorAll('tbody tr.r');
		return {
			head: root.querySelector('thead th').getBoundingClientRect().top, top: root.getBoundingClientRect().top,
			h1: h1.top >= 0 && h1.bottom <= innerHeight, total: total.top >= 0 && total.bottom <= innerHeight,
			rendered: rows.length, last: Number(rows[rows.length - 1].dataset.row),
			pageScroll: document.scrollingElement.scrollTop, fits: document.documentElement.scrollHeight <= innerHeight,
			fitsX: document.documentElement.scrollWidth <= innerWidth,
			rootBottom: root.getBoundingClientRect().bottom,
		};
	});
	eq(after.head, before.head, 'headings stay at the top of the table');
	assert(after.h1 && after.total, 'title and total time stay visible');
	eq([after.pageScroll, after.fits, after.fitsX], [0, true, true], 'the report fits the window');
	assert(after.rootBottom <= 900, 'the table ends inside the window');
	assert(after.rendered < textLines(UTIL).length / 2, 'long files draw only the rows in view: ' + after.rendered);
	eq(after.last, textLines(UTIL).length, 'scrolling to the end draws the last lines');
	// a long line scrolls inside the table, not the page
	await openSrc(page, APP, lineOf(APP, 'LONG = ['));
	const x = await page.evaluate(() => {
		const root = document.querySelector('.content .tscroll');
		return { sw: root.scrollWidth, cw: root.clientWidth, page: document.documentElement.scrollWidth <= innerWidth };
	});
	assert(x.sw > x.cw && x.page, 'long lines scroll horizontally inside the table');
});

H.test('notebook cells: labelled boundaries, sorting within cells', async (page) => {
	await H.open(page, 'fixture.html', '#source/' + NB);
	let rows = await tableRows(page, SRC);
	const cells = FIX.sources[NB].cells;
	const labels = cells.map((c) => c.label + (c.revision ? ` (${c.revision})` : ''));
	// the first cell's label is the one under the headings; later cells get a boundary row
	eq(await page.textContent(`${SRC} thead tr.ghead`), labels[0], 'first cell label under the headings');
	rows.forEach((r) => { r.group = r.group === null ? labels[0] : r.group; });
	eq([...new Set(rows.map((r) => r.group))], labels, 'cells in capture order with revision labels');
	eq(rows.filter((r) => r.group === labels[1]).map((r) => r.cells.ln), ['1', '2'], 'numbering restarts per cell');
	await clickSort(page, SRC, 'time');
	rows = await tableRows(page, SRC);
	rows.forEach((r) => { r.group = r.group === null ? labels[0] : r.group; });
	eq([...new Set(rows.map((r) => r.group))], labels, 'sorting keeps the cells in order');
	for (const c of cells) {
		const lab = c.label + (c.revision ? ` (${c.revision})` : '');
		const got = rows.filter((r) => r.group === lab).map((r) => r.row);
		const items = [];
		for (let l = c.first; l < c.first + c.nlines; l++)
			items.push({ id: l, k: l, v: val(NB, l, 'time_s') });
		eq(got, expectedOrder(items, -1), 'sorted within ' + lab);
	}
	// the label under the headings follows the scroll position
	await page.setViewportSize({ width: 1400, height: 520 });
	await clickSort(page, SRC, 'source');
	await page.evaluate(() => { document.querySelector('.content .tscroll').scrollTop = 10 * 25; });
	await page.waitForTimeout(100);
	const top = await page.evaluate(() => {
		const root = document.querySelector('.content .tscroll');
		const y = Math.max(...[...root.querySelectorAll('thead th')].map((th) => th.getBoundingClientRect().bottom));
		const tr = [...root.querySelectorAll('tbody tr.r')].find((t) => t.getBoundingClientRect().bottom > y + 2);
		return Number(tr.dataset.row);
	});
	const cellOfTop = cells.find((c) => c.first <= top && top < c.first + c.nlines);
	eq(await page.textContent(`${SRC} thead tr.ghead`), cellOfTop.label + (cellOfTop.revision ? ` (${cellOfTop.revision})` : ''),
	   'the current cell label sits under the headings');
});

H.test('process selector: combined and per-process rows', async (page) => {
	const line = lineOf(UTIL, 'rows.append');
	await openSrc(page, UTIL, line);
	const cell = async () => (await tableRows(page, SRC)).find((r) => r.row === line).cells;
	const all = await cell();
	eq([all.time, all.samples, all.hits], ['1.30 s', '800', '3,000'], 'all processes: rows summed');
	await page.selectOption('#proc-select', '1');
	await page.waitForFunction(() => location.hash.endsWith('?p=1'));
	const one = await cell();
	eq([one.time, one.hits], ['500 ms', '3,000'], 'worker only');
	assert((await page.textContent('#proc-info')).includes('Python 3.12.1 (shared)'), 'Python build in the header');
	await page.selectOption('#proc-select', '2');
	assert((await page.textContent('#proc-info')).includes('not Python: samples counted under the command'),
	       'note of a non-Python process');
	await H.open(page, 'fixture.html', '#overview?p=2');
	assert((await page.textContent('.start')).includes('not Python'), 'overview explains the empty process');
	const procs = await tableRows(page, '.content table.procs');
	eq(procs.map((r) => r.cells.python), ['3.11.2 (static, usdt)', '3.12.1 (shared)', 'not Python', '3.11.7 (shared)'],
	   'Python build of every process');
});

H.test('callers and callees of a line', async (page) => {
	await openSrc(page, APP);
	const l = lineOf(APP, 'total += parse(row)');
	await page.click(`${SRC} tr[data-row="${l}"] .mk.down`);
	const callees = await page.$$eval('.popover ul.edges li a', (as) => as.map((a) => a.textContent));
	eq(callees.slice(-1), [`parse · util.py:${lineOf(UTIL, 'def parse')}`], 'callee: the called function');
	const callers = await page.$$eval('.popover ul.edges', (u) => u.length);
	assert(callers >= 1, 'menu lists edges');
	await page.keyboard.press('Escape');
	await openSrc(page, UTIL);
	const def = lineOf(UTIL, 'def parse');
	await page.click(`${SRC} tr[data-row="${def}"] .mk.up`);
	const list = await page.$$eval('.popover ul.edges li a', (as) => as.map((a) => a.textContent));
	eq(list, [`app.py:${lineOf(APP, 'total += parse(row)')}`, `app.py:${lineOf(APP, 'print(msg')}`],
	   'callers of parse, most samples first');
});

H.test('self/total switch and hot-only filter', async (page) => {
	await openSrc(page, APP);
	const l = lineOf(APP, 's = summarize(rows)');
	const get = async () => (await tableRows(page, SRC)).find((r) => r.row === l);
	eq((await get()).cells.time, '250 ms', 'self time');
	await page.click('#mode-switch button[data-value="total"]');
	eq(await page.textContent(`${SRC} th[data-col="time"] button`), 'Total time↕', 'Total label');
	eq((await get()).cells.time, '3.60 s', 'total time');
	await page.click('#mode-switch button[data-value="self"]');
	await page.check('#hot-only');
	const rows = await tableRows(page, SRC);
	const hot = [...ALL.values()].filter((r) => r.src === APP &&
		(r.time_s > 0 || r.samples > 0 || r.hits > 0 || r.mem_change > 0 || r.gpu_s > 0)).map((r) => r.line);
	eq(rows.map((r) => r.row), hot.sort((a, b) => a - b), 'hot only: measured lines');
});

H.test('child invocations: context column, files list, metadata', async (page) => {
	await openSrc(page, APP);
	const l = lineOf(APP, '"worker.py"');
	const ctx = (await tableRows(page, SRC)).find((r) => r.row === l).cells.context;
	assert(ctx.includes('python3 worker.py'), 'context column lists the child: ' + ctx);
	await page.click(`${SRC} tr[data-row="${l}"] td.ctx a`);
	await page.waitForFunction(() => location.hash.startsWith('#child/0'));
	const meta = await page.textContent('dl.meta');
	for (const s of ['python3 worker.py 3', '4300', '2.90 s', 'exit 0', '3.12.1'])
		assert(meta.includes(s), 'metadata shows ' + s);
	assert(await page.isVisible('table.hot'), 'its own lines are listed');
	await H.open(page, 'fixture.html', '#files');
	const kids = await tableRows(page, '.children');
	eq(kids.map((r) => r.cells.status), ['Failed exit 1', 'Success exit 0', 'Failed signal KILL', 'Reference'],
	   'children by wait time, with status and exit');
	const noCtx = await openSrc(page, TOOLS);
	void noCtx;
	eq(await page.$$eval(`${SRC} th[data-col="context"]`, (t) => t.length), 0, 'Context only when the source has links');
});

// ---- memory and GPU ------------------------------------------------------------------------------

H.test('memory view: badges, timelines, keyboard, ranking', async (page) => {
	await H.open(page, 'fixture.html', '#memory');
	const secs = await page.$$eval('section.memproc', (s) => s.map((x) => x.dataset.proc));
	eq(secs, ['0', '1'], 'one section per process, never summed');
	const peak = await page.$$eval('section.memproc .card .cvalue', (c) => c.map((x) => x.textContent));
	const fmt = (b) => (b / 1e6).toFixed(1) + ' MB';
	eq(peak[0], fmt(FIX.memory.procs[0].peak), 'peak badge in decimal units');
	assert(peak[1].startsWith('+'), 'largest line change is signed');
	assert(await page.isVisible('section.memproc[data-proc="0"] .notice'), 'merged readings are noticed');
	eq(await page.$$eval('section.memproc[data-proc="1"] .notice', (n) => n.length), 0, 'no notice when not merged');
	const gaps = await page.$eval('section.memproc[data-proc="0"] path.line', (p) => p.getAttribute('d').split('M').length - 1);
	eq(gaps, 2, 'a missing reading leaves a gap');
	const chart = page.locator('section.memproc[data-proc="0"] .chart');
	const box = await chart.locator('.plot').boundingBox();
	await page.mouse.move(box.x + box.width / 2, box.y + 100);
	assert(await chart.locator('line.guide[visibility="visible"]').count() === 1, 'hover shows the guide');
	const tip = await chart.locator('.tip').textContent();
	assert(/ s/.test(tip) && / MB/.test(tip), 'tooltip shows time and bytes: ' + tip);
	await chart.focus();
	const r0 = Number(await chart.getAttribute('data-reading'));
	await page.keyboard.press('ArrowRight');
	await page.keyboard.press('ArrowRight');
	const r2 = Number(await chart.getAttribute('data-reading'));
	assert(r2 > r0, 'arrow keys step through readings');
	await page.keyboard.press('Home');
	eq(Number(await chart.getAttribute('data-reading')), 0, 'Home: first reading');
	eq(await chart.locator('.tip').textContent().then((t) => t.includes('no project line active')), true,
	   'the first reading has no line');
	for (let i = 0; i < 5; i++)
		await page.keyboard.press('ArrowRight');
	await page.keyboard.press('Enter');
	await page.waitForFunction(() => location.hash.startsWith('#source/1/'));
	await page.goBack();
	await page.waitForFunction(() => location.hash === '#memory');
	const rank = await tableRows(page, 'table.memrank');
	eq(await sortState(page, 'table.memrank', 'memchange'), 'descending', 'ranking by growth');
	const mc = [...ALL.values()].filter((r) => r.mem_change !== undefined).sort((a, b) => b.mem_change - a.mem_change);
	eq(rank.map((r) => r.cells.loc).slice(0, 3), mc.slice(0, 3).map((r) => FIX.sources[r.src].name + ':' + r.line),
	   'largest growth first');
	// one process: only its timeline, and its own lines in the ranking
	await H.open(page, 'fixture.html', '#memory?p=1');
	eq(await page.$$eval('section.memproc', (s) => s.map((x) => x.dataset.proc)), ['1'], 'selected process only');
	const own = [...combinedLines(FIX, 1).values()].filter((r) => r.mem_change !== undefined).length;
	eq((await tableRows(page, 'table.memrank')).length, own, 'ranking of the selected process');
});

H.test('GPU view: devices, notes, line estimates', async (page) => {
	await H.open(page, 'fixture.html', '#gpu');
	const names = await page.$$eval('.device .dname', (d) => d.map((x) => x.textContent));
	eq(names, ['NVIDIA H200', 'NVIDIA RTX A4000'], 'a card per device');
	const second = await page.textContent('.device:nth-child(2)');
	assert(second.includes('–') && second.includes('not reported by this driver model'), 'dash and reason');
	const rows = await tableRows(page, 'table.gpulines');
	eq(rows.length, [...ALL.values()].filter((r) => r.gpu_s !== undefined).length, 'lines with GPU time');
	await clickSort(page, 'table.gpulines', 'gpumem');
	const mem = (await tableRows(page, 'table.gpulines')).map((r) => parseFloat(r.cells.gpumem));
	eq(mem, [...mem].sort((a, b) => b - a), 'sortable by GPU memory');
	// the parts launched for a waiting line and in NCCL: their columns, from the data, sortable
	const withNative = [...ALL.values()].filter((r) => r.gpu_native_s > 0).length;
	await clickSort(page, 'table.gpulines', 'native');
	const nat = (await tableRows(page, 'table.gpulines')).map((r) => r.cells.native);
	eq(nat.filter((c) => c.trim() && !/^0(\.0+)?\s*s?$|^[–-]$/.test(c.trim())).length, withNative,
	   'a "Launched for it" time on each line that has one');
	assert(nat.slice(0, withNative).every((c) => c.trim() !== ''), 'largest first');
	assert((await page.$$eval('table.gpulines thead th', (t) => t.map((x) => x.textContent))).some((t) => t.startsWith('NCCL')),
	       'an NCCL column');
	// --timeline: the device's busy strip and the lines its idle time went to, sortable, linked
	const U = FIX.gpu.timeline[0];
	eq(await page.$$eval('section.gputl', (s) => s.map((x) => x.dataset.device)), ['0'], 'a timeline per device');
	eq(await page.$$eval('svg.busystrip rect.busy', (r) => r.length), U.busy_series.values.filter((v) => v > 0).length,
	   'a bar per busy part of the window');
	const sum = await page.textContent('.gpusummary');
	const most = [...U.idle_lines].sort((a, b) => b.idle_s - a.idle_s)[0];
	assert(sum.startsWith('GPU 0 was idle') && sum.includes(':' + most.line), 'the summary names the most idle line: ' + sum);
	eq(await page.$$eval('.lanes .laneRow .lname', (l) => l.map((x) => x.textContent)), ['stream 7', 'stream 9'],
	   'a lane per stream');
	const idle = await tableRows(page, 'table.gpuidle');
	eq(idle.length, U.idle_lines.length, 'a row per idle line');
	const lineNo = (r) => parseInt(r.cells.loc.split(':').pop(), 10);
	const by = (k) => [...U.idle_lines].sort((a, b) => b[k] - a[k]).map((l) => l.line);
	eq(idle.map(lineNo), by('idle_s'), 'most idle first');
	await clickSort(page, 'table.gpuidle', 'blocked');
	eq((await tableRows(page, 'table.gpuidle')).map(lineNo)[0], by('blocked_s')[0], 'sortable by blocked time');
	assert(await page.$('table.gpuidle td a[href*="#source/"]'), 'idle lines link to their source');
	const gaps = await tableRows(page, 'table.gpugaps');
	eq(gaps.length, U.longest_gaps.length, 'a row per long gap');
	eq(gaps[0].cells.glines.split(', ').length, U.longest_gaps[0].lines.length, 'the lines of the longest gap');
	// one process selected: only its lines
	await H.open(page, 'fixture.html', '#gpu?p=1');
	eq((await tableRows(page, 'table.gpuidle')).length, U.idle_lines.filter((l) => l.proc === 1).length,
	   'the selected process\'s idle lines only');
});

// ---- flame graph -------------------------------------------------------------------------------

const FL = FIX.flame.nodes, FLN = FL.parent.length, ROW = 18;
const flSel = 'canvas.flamecanvas';

// Samples of the fixture's tree below the nodes that match, each node once (computed here).
function flameCovered(match) {
	const cov = [];
	let sum = 0;
	for (let i = 0; i < FLN; i++) {
		cov[i] = match(i) || (FL.parent[i] >= 0 && cov[FL.parent[i]]);
		if (cov[i])
			sum += FL.samples[i];
	}
	return sum;
}

async function openFlame(page, file, metric) {
	await H.open(page, file || 'fixture.html', '#flame');
	if (metric)
		await page.click(`#flame-metric button[data-value="${metric}"]`);
}

// [r, g, b] of the canvas at css x (negative: from the right) in frame row `row`
async function flamePixel(page, x, row, y) {
	return page.evaluate(([sel, x, y]) => {
		const c = document.querySelector(sel), d = window.devicePixelRatio || 1;
		const X = x < 0 ? c.width + x * d : x * d;
		const p = c.getContext('2d').getImageData(Math.floor(X), Math.floor(y * d), 1, 1).data;
		return [p[0], p[1], p[2]];
	}, [flSel, x, y === undefined ? row * ROW + ROW / 2 : y]);
}

async function cssRgb(page, name) {
	return page.evaluate((name) => {
		const e = document.createElement('i');
		e.style.color = getComputedStyle(document.documentElement).getPropertyValue(name);
		document.body.appendChild(e);
		const c = getComputedStyle(e).color.match(/\d+/g).slice(0, 3).map(Number);
		e.remove();
		return c;
	}, name);
}

H.test('flame graph: a canvas whose root holds every sample and all the time', async (page) => {
	await openFlame(page);
	const box = await page.$eval(flSel, (c) => [c.clientWidth, c.clientHeight]);
	assert(box[0] > 800 && box[1] >= 7 * ROW, 'the canvas is drawn: ' + box);
	// wall time by default (the fixture has off-CPU time), every kind in the legend
	const wall = ['cpu_s', 'wait_s', 'gil_wait_s', 'runq_s'].reduce((a, c) => a + FL[c].reduce((x, y) => x + y, 0), 0);
	const total = async () => Number(await page.getAttribute('.flametotal', 'data-total'));
	assert(Math.abs(await total() - wall) < 1e-6, `wall total ${await total()} vs ${wall}`);
	const legend = await page.textContent('.flamelegend');
	for (const k of ['waiting: I/O, sleep, locks', 'waiting for the GIL', 'waiting for a CPU'])
		assert(legend.includes(k), 'legend names ' + k);
	await page.click('#flame-metric button[data-value="samples"]');
	eq(await total(), FIX.run.samples, 'the root holds the report\'s samples');
	eq(await total(), FIX.processes.reduce((a, p) => a + p.samples, 0), 'and those of every process');
	// the top row is the root frame, painted across the width
	eq(await flamePixel(page, 1, 0), await flamePixel(page, -3, 0), 'root spans the canvas');
	// one process selected: its own root
	await page.selectOption('#proc-select', '1');
	await page.waitForFunction(() => /pid 4300/.test(document.querySelector('.crumbs').textContent));
	eq(await total(), FIX.processes[1].samples, 'a selected process has its own total');
});

H.test('flame graph: click zooms, the breadcrumb zooms out', async (page) => {
	await openFlame(page, null, 'samples');
	const bg = await cssRgb(page, '--panel');
	const right0 = await flamePixel(page, -3, 2);
	// row 2, leftmost: pid 4242's <module> (the heaviest frame of the heaviest process)
	await page.click(flSel, { position: { x: 5, y: 2 * ROW + 9 } });
	const zoom = Number(await page.getAttribute(flSel, 'data-zoom'));
	eq(FIX.flame.funcs.name[FL.func[zoom]], '<module>', 'zoomed on <module>');
	eq(await page.$$eval('.crumbs .crumb', (b) => b.map((x) => x.textContent)),
	   ['All processes', 'pid 4242 python3', '<module>'], 'breadcrumb shows the path');
	await page.focus('.flamesearch'); // no focus ring on the frame
	const left = await flamePixel(page, 1, 2), right = await flamePixel(page, -3, 2);
	eq(right, left, 'the zoomed frame spans the full width');
	assert(JSON.stringify(right) !== JSON.stringify(bg) && JSON.stringify(right) !== JSON.stringify(right0),
	       'the right end of its row changed to the zoomed frame');
	assert((await page.textContent('.flamedetail')).includes('<module>'), 'the detail row names it');
	await page.click('.crumbs .crumb >> text=All processes');
	eq(await page.getAttribute(flSel, 'data-zoom'), String(FLN), 'zoomed out to the top');
	eq(await flamePixel(page, -3, 2), right0, 'drawn as before');
});

H.test('flame graph: search marks matches and counts each sample once', async (page) => {
	await openFlame(page, null, 'samples');
	const match = await cssRgb(page, '--fl-match');
	const hasColor = () => page.evaluate(([sel, m]) => {
		const c = document.querySelector(sel), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		for (let i = 0; i < d.length; i += 4)
			if (d[i] === m[0] && d[i + 1] === m[1] && d[i + 2] === m[2])
				return true;
		return false;
	}, [flSel, match]);
	assert(!(await hasColor()), 'nothing marked before searching');
	await page.fill('.flamesearch', 'parse');
	await page.waitForFunction(() => document.querySelector('.flamefound').textContent !== '');
	// parse below parse and below tail_helper: 2,000 + 300 + 10, never 300 twice
	const want = flameCovered((i) => FL.func[i] >= 0 && FIX.flame.funcs.name[FL.func[i]] === 'parse');
	eq(want, 2310, 'fixture: samples under parse');
	eq(Number(await page.getAttribute('.flamefound', 'data-value')), want, 'matched samples');
	const shareTxt = await page.textContent('.flamefound');
	assert(shareTxt.includes((100 * want / FIX.run.samples).toFixed(0) + '%'), 'share shown: ' + shareTxt);
	assert(Math.abs(Number(await page.getAttribute('.flamefound', 'data-share')) - want / FIX.run.samples) < 1e-12,
	       'share of the total');
	assert(await hasColor(), 'matching frames are marked');
	await page.fill('.flamesearch', '');
	await page.waitForFunction(() => document.querySelector('.flamefound').textContent === '');
});

H.test('flame graph: tooltip, and a frame opens its source line', async (page) => {
	await openFlame(page, null, 'samples');
	const line = lineOf(APP, 's = summarize(rows)');
	// row 3, leftmost: main at the call of summarize (3,200 samples)
	await page.hover(flSel, { position: { x: 5, y: 3 * ROW + 9 } });
	const tip = await page.textContent('.flametip');
	assert(tip.includes('main') && tip.includes('/home/u/proj/app.py:' + line), 'tooltip: ' + tip);
	assert(tip.includes('3,200 samples') && tip.includes('23% of total') && tip.includes('CPU time'),
	       'tooltip values: ' + tip);
	await page.click(flSel, { position: { x: 5, y: 3 * ROW + 9 } });
	eq(await page.getAttribute('.flamedetail a.flameline', 'href'), '#source/0/' + line, 'link to the line');
	eq(await page.getAttribute('.flamedetail a.flamefunc', 'href'), '#source/0/' + lineOf(APP, 'def main'),
	   'link to the function');
	await page.dblclick(flSel, { position: { x: 5, y: 3 * ROW + 9 } });
	await page.waitForFunction(() => location.hash.startsWith('#source/'));
	eq(await page.evaluate(() => location.hash), '#source/0/' + line, 'double-click opens the line');
	await page.waitForSelector(`${SRC} tr.target`);
	eq(await page.getAttribute(`${SRC} tr.target`, 'data-row'), String(line), 'the source view marks the line');
});

H.test('flame graph: keyboard', async (page) => {
	await openFlame(page, null, 'samples');
	await page.focus(flSel);
	const focus = async () => Number(await page.getAttribute(flSel, 'data-focus'));
	const zoom = async () => Number(await page.getAttribute(flSel, 'data-zoom'));
	eq(await focus(), FLN, 'starts on the root');
	await page.keyboard.press('ArrowDown');
	eq(await focus(), 0, 'down: the heaviest process');
	await page.keyboard.press('ArrowDown');
	const mod = await focus();
	eq(FIX.flame.funcs.name[FL.func[mod]], '<module>', 'down: its heaviest child');
	await page.keyboard.press('ArrowRight');
	eq(FL.func[await focus()], -2, 'right: the next frame of the row ([native])');
	await page.keyboard.press('ArrowLeft');
	eq(await focus(), mod, 'left: back');
	await page.keyboard.press('Enter');
	eq(await zoom(), mod, 'Enter zooms');
	await page.keyboard.press('ArrowUp');
	eq(await focus(), 0, 'up: the parent');
	await page.keyboard.press('Escape');
	eq(await zoom(), 0, 'Escape zooms out one level');
	await page.keyboard.press('/');
	eq(await page.evaluate(() => document.activeElement.className), 'flamesearch', '/ focuses the search');
});

H.test('flame graph: dark theme paints a dark canvas', async (page) => {
	await openFlame(page, null, 'samples');
	const h = await page.$eval(flSel, (c) => c.clientHeight);
	const corner = () => flamePixel(page, -2, 0, h - 2);
	eq(await corner(), [19, 29, 35], 'dark panel behind the frames');
	const text = await cssRgb(page, '--fl-text');
	assert(text[0] > 200, 'light text on dark frames');
	await page.click('#theme-toggle');
	await page.waitForFunction((sel) => {
		const c = document.querySelector(sel), p = c.getContext('2d').getImageData(c.width - 2, c.height - 2, 1, 1).data;
		return p[0] === 255 && p[1] === 255 && p[2] === 255;
	}, flSel);
}, { colorScheme: 'dark' });

H.test('flame graph: a CPU profile has no wall time, and damaged trees are refused', async (page) => {
	await openFlame(page, 'plain.html');
	eq(await page.$$eval('#flame-metric button', (b) => b.map((x) => x.dataset.value)), ['samples', 'cpu'],
	   'no wall time without off-CPU data');
	eq(Number(await page.getAttribute('.flametotal', 'data-total')), PLAIN.run.samples, 'total samples');
	const doc = JSON.parse(JSON.stringify(PLAIN));
	doc.flame.nodes.parent[3] = 7; // a parent after its child
	doc.flame.funcs.name[0] = '<img src=x onerror="window.__pwned=3">';
	await H.open(page, mkhtml('flame-bad', doc), '#flame');
	assert((await page.textContent('.content .notice')).includes('damaged'), 'refused with a notice');
	const evil = JSON.parse(JSON.stringify(PLAIN));
	evil.flame.funcs.name[0] = '<img src=x onerror="window.__pwned=3">';
	evil.flame.nodes.samples[2] = -5;
	evil.flame.nodes.line[2] = 1e12;
	await H.open(page, mkhtml('flame-evil', evil), '#flame');
	await page.hover(flSel, { position: { x: 5, y: 2 * ROW + 9 } });
	assert((await page.textContent('.flametip')).includes('<img'), 'a name is text');
	// a tree the writer capped: its "(other)" node is in the legend; the narrow frames (3,000 and it) are one block
	const wide = JSON.parse(JSON.stringify(PLAIN)), W = wide.flame.nodes;
	W.parent.push(0);
	W.func.push(-3);
	W.proc.push(0);
	W.line.push(0);
	W.samples.push(1);
	W.cpu_s.push(0.001);
	for (let i = 0; i < 3000; i++) {
		W.parent.push(0);
		W.func.push(0);
		W.proc.push(0);
		W.line.push(100 + i);
		W.samples.push(1);
		W.cpu_s.push(0.001);
	}
	wide.flame.folded = 42;
	await H.open(page, mkhtml('flame-wide', wide), '#flame');
	assert((await page.textContent('.flamelegend')).includes('(other): 42 small frames folded'), 'legend: folded');
	eq(Number(await page.getAttribute('.flametotal', 'data-total')), PLAIN.run.samples + 3001, 'every node counted');
	const w = await page.$eval(flSel, (c) => c.clientWidth);
	await page.hover(flSel, { position: { x: w - 2, y: 2 * ROW + 9 } });
	assert(/3,001 frames too narrow to draw/.test(await page.textContent('.flametip')), 'narrow frames as one block: ' +
	       await page.textContent('.flametip'));
});

// ---- plain fixture, back/forward, screenshots ---------------------------------------------------

H.test('a plain sampling profile shows only its columns and views', async (page) => {
	await H.open(page, 'plain.html', '#source/0');
	const cols = await page.$$eval(`${SRC} thead tr.heads th`, (t) => t.map((x) => x.dataset.col));
	eq(cols, ['ln', 'time', 'samples', 'source'], 'sampling columns only');
	const nav = await page.$$eval('nav.views a', (as) => as.map((a) => a.dataset.view));
	eq(nav, ['overview', 'files', 'functions', 'flame'], 'no Memory, GPU or Spark view without data');
	await H.open(page, 'plain.html', '#memory');
	eq(await page.textContent('.content h1'), 'Overview', 'a hidden view falls back to the overview');
	void PLAIN;
});

// Wraps a document through the real writer (the mkhtml driver next to the fixtures).
function mkhtml(name, doc) {
	const json = path.join(dir, name + '.json'), html = path.join(dir, name + '.html');
	fs.writeFileSync(json, JSON.stringify(doc));
	require('child_process').execFileSync(path.join(dir, 'mkhtml'), [json, html]);
	return name + '.html';
}

H.test('minimal and unsupported documents', async (page) => {
	// a profile with nothing in it still opens every view
	const empty = mkhtml('empty', { version: 1 });
	for (const hash of ['', '#files', '#functions', '#source/0', '#memory', '#child/0', '#spark/3']) {
		await H.open(page, empty, hash);
		assert(await page.isVisible('.content h1'), 'empty profile renders ' + (hash || 'overview'));
	}
	const bad = mkhtml('future', { version: 2 });
	await page.goto(H.url(bad));
	await page.waitForFunction(() => document.documentElement.getAttribute('data-ready'));
	eq(await page.evaluate(() => document.documentElement.getAttribute('data-ready')), 'error', 'refused');
	assert((await page.textContent('.fatal')).includes('unsupported report data version 2'), 'says why');
});

H.test('views follow back and forward', async (page) => {
	await H.open(page, 'fixture.html');
	await page.click('nav.views a[data-view="files"]');
	await page.waitForFunction(() => location.hash === '#files');
	await page.click('nav.views a[data-view="functions"]');
	await page.waitForFunction(() => location.hash === '#functions');
	await page.goBack();
	await page.waitForFunction(() => document.querySelector('.content h1').textContent === 'Files');
	await page.goBack();
	await page.waitForFunction(() => document.querySelector('.content h1').textContent === 'Overview');
	await page.goForward();
	await page.waitForFunction(() => document.querySelector('.content h1').textContent === 'Files');
});

async function shots(page, scheme) {
	fs.mkdirSync(SHOTS, { recursive: true });
	for (const [name, hash] of [['overview', ''], ['source', '#source/0'], ['util', '#source/1/8'],
				    ['notebook', '#source/4'], ['files', '#files'], ['functions', '#functions'], ['flame', '#flame'],
				    ['memory', '#memory'], ['gpu', '#gpu'], ['spark', '#spark/0'], ['child', '#child/2']]) {
		await H.open(page, 'fixture.html', hash);
		await page.screenshot({ path: path.join(SHOTS, `${name}-${scheme}.png`) });
	}
	await H.open(page, 'plain.html', '#source/0');
	await page.screenshot({ path: path.join(SHOTS, `plain-source-${scheme}.png`) });
}

H.test('light screenshots', async (page) => {
	await shots(page, 'light');
}, { colorScheme: 'light' });

H.test('dark theme follows the system and the toggle', async (page) => {
	await H.open(page, 'fixture.html');
	const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
	const dark = await bg();
	eq(dark, 'rgb(13, 20, 24)', 'the system dark preference gives the dark palette');
	await page.click('#theme-toggle');
	const light = await bg();
	assert(dark !== light, 'toggle switches the theme');
	await page.click('#theme-toggle');
	eq(await bg(), dark, 'toggle back');
	await shots(page, 'dark');
}, { colorScheme: 'dark' });

H.run(filter).then((failed) => process.exit(failed ? 1 : 0), (e) => {
	console.error(e);
	process.exit(2);
});
