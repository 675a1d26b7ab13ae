// SPDX-License-Identifier: MIT
// Checks the HTML report of `report NEW --diff BASE` in chromium against the same diff as JSON
// (`--format json`): the Overview's summary and largest changes, the Functions table's Δ columns
// (regressions first, colours by sign, "new" rows), the source view's moved-line markers and the
// differential flame graph (totals of both trees, colours by change in share).
// Usage: node diff.js DIFF.html DIFF.json
'use strict';

const fs = require('fs');
const path = require('path');
const { Harness, assert, eq, tableRows, clickSort } = require('./lib');

const html = path.resolve(process.argv[2]);
const want = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const H = new Harness(path.dirname(html));
const file = path.basename(html);

const lineOf = (tag) => want.lines.find((l) => (l.source || '').includes('# ' + tag));
const funcOf = (name) => want.functions.find((f) => f.function === name);

// "+1.23 s" / "-967 µs" -> seconds
function secs(text) {
	const m = /^([+-]?[\d.,]+) (ns|µs|ms|s)$/.exec(text.trim());
	assert(m, 'not a time: ' + text);
	return Number(m[1].replace(/,/g, '')) * { ns: 1e-9, 'µs': 1e-6, ms: 1e-3, s: 1 }[m[2]];
}

H.test('overview: summary and the largest change by line', async (page) => {
	await H.open(page, file, '#overview');
	const sum = await page.textContent('section.diff .diffsum');
	const m = want.diff.matching;
	assert(sum.includes(`${m.same} same, ${m.moved} moved with their function, ${m.edited} edited`),
	       'matching counts not shown: ' + sum);
	assert(sum.includes(want.diff.base_profile), 'base profile not named: ' + sum);
	const rows = await tableRows(page, 'section.diff');
	assert(rows.length > 0, 'no rows in the largest changes');
	// the JSON's rows are by change, largest regression first; the table is by Δ Time too
	const top = want.lines[0];
	assert(Math.abs(secs(rows[0].cells.dtime) - top.delta_time_s) <= 0.01 * Math.abs(top.delta_time_s) + 1e-5,
	       `first row ${rows[0].cells.dtime}, want ${top.delta_time_s}`);
	const cls = await page.getAttribute('section.diff tbody tr.r td:nth-child(1)', 'class');
	assert(/\bgrow\b/.test(cls || ''), 'a regression is not coloured as one: ' + cls);
	const gone = await page.textContent('section.diff ul.gone');
	assert(gone.includes('base_only'), 'the function only in the base is not listed: ' + gone);
});

H.test('functions: regressions first, signs coloured, new rows marked', async (page) => {
	await H.open(page, file, '#functions');
	const rows = await tableRows(page, '.index.funcs');
	const light = funcOf('light');
	assert(light && light.delta_time_s > 0, 'the fixture has no regression in light()');
	const deltas = rows.map((r) => r.cells.dtime).filter((t) => t.trim() !== '–').map(secs);
	for (let i = 1; i < deltas.length; i++)
		assert(deltas[i] <= deltas[i - 1] + 1e-9, `not sorted by Δ Time at row ${i}: ${deltas[i - 1]}, ${deltas[i]}`);
	const lr = rows.find((r) => r.cells.source === 'light');
	assert(lr, 'no row for light');
	assert(Math.abs(secs(lr.cells.dtime) - light.delta_time_s) <= 0.01 * light.delta_time_s,
	       `light: ${lr.cells.dtime}, want ${light.delta_time_s}`);
	const nr = rows.find((r) => r.cells.source === 'new_only');
	assert(nr && nr.cells.dpct === 'new', 'new_only is not marked new: ' + (nr && nr.cells.dpct));
	// colours: every positive Δ is "grow", every negative one "better"
	const classes = await page.evaluate(() => [...document.querySelectorAll('.index.funcs tbody tr.r')].map((tr) => {
		const td = tr.querySelector('td:nth-child(2)');
		return [td.textContent, td.className];
	}));
	for (const [t, c] of classes) {
		if (t.startsWith('+'))
			assert(/\bgrow\b/.test(c), `${t} is not coloured as a regression: ${c}`);
		else if (t.startsWith('-'))
			assert(/\bbetter\b/.test(c), `${t} is not coloured as an improvement: ${c}`);
	}
	// Δ%: descending puts rows the base did not have first
	await clickSort(page, '.index.funcs', 'dpct');
	let after = await tableRows(page, '.index.funcs');
	if (after[0].cells.dpct !== 'new') {
		await clickSort(page, '.index.funcs', 'dpct');
		after = await tableRows(page, '.index.funcs');
	}
	eq(after[0].cells.dpct, 'new', 'Δ% descending starts with a new row');
});

H.test('source view: a moved line says where it was', async (page) => {
	const body = lineOf('LIGHT_BODY');
	assert(body && body.match === 'moved', 'the fixture line did not move: ' + JSON.stringify(body));
	await H.open(page, file, '#overview');
	const s = await page.evaluate((p) => {
		const D = JSON.parse(document.getElementById('ls-data').textContent);
		return D.sources.findIndex((x) => x.path === p);
	}, body.path);
	assert(s >= 0, 'no source for ' + body.path);
	await H.open(page, file, `#source/${s}/${body.line}`);
	const cell = await page.evaluate((line) => {
		const tr = [...document.querySelectorAll('table.srctable tbody tr.r')].find((r) => Number(r.dataset.row) === line);
		const td = tr && tr.querySelector('td.dmatch');
		return td ? { cls: td.className, title: td.title } : null;
	}, body.line);
	assert(cell && /\bm-moved\b/.test(cell.cls), 'no moved marker on line ' + body.line + ': ' + JSON.stringify(cell));
	assert(cell.title.includes('base line ' + body.base_line), 'the marker does not give the base line: ' + cell.title);
});

// [r, g, b] of the flame canvas at css (x, y)
async function pixel(page, x, y) {
	return page.evaluate(([x, y]) => {
		const c = document.querySelector('canvas.flamecanvas'), d = window.devicePixelRatio || 1;
		const p = c.getContext('2d').getImageData(Math.floor(x * d), Math.floor(y * d), 1, 1).data;
		return [p[0], p[1], p[2]];
	}, [x, y]);
}

H.test('flame graph: the change against the base, coloured by change in share', async (page) => {
	await H.open(page, file, '#flame');
	await page.click('#flame-show button[data-value="diff"]');
	await page.click('#flame-metric button[data-value="samples"]');
	const F = await page.evaluate(() => JSON.parse(document.getElementById('ls-data').textContent).diff_flame);
	const sum = (a) => a.reduce((x, y) => x + y, 0);
	eq(Number(await page.getAttribute('.flametotal', 'data-total')), sum(F.nodes.samples), 'new total');
	eq(Number(await page.getAttribute('.flametotal', 'data-base-total')), sum(F.nodes.base_samples), 'base total');
	// every base sample is in the tree: the base run's samples, those of an unknown interpreter too
	const br = want.base_run;
	eq(sum(F.nodes.base_samples), br.samples + br.lost.unresolved, 'the base tree holds all its samples');
	const legend = await page.textContent('.flamelegend');
	assert(/share of its own profile's total, new minus base/.test(legend), 'normalisation not stated: ' + legend);
	// frames of light() grew their share (4x the work), those of heavy() shrank (the same work,
	// a smaller part of the whole): red and blue
	const bb = await (await page.$('canvas.flamecanvas')).boundingBox();
	const seen = {};
	for (let row = 2; row < 9 && !(seen.light && seen.heavy); row++) {
		for (let x = 3; x < bb.width - 3; x += 24) {
			await page.mouse.move(bb.x + x, bb.y + row * 18 + 9);
			const tip = await page.textContent('.flametip');
			const m = /^(light|heavy)\b/.exec(tip || '');
			if (!m || seen[m[1]] || !/Base/.test(tip))
				continue;
			// the box's top pixel row: its label is drawn lower down
			seen[m[1]] = { tip, rgb: await pixel(page, x, row * 18 + 1) };
		}
	}
	assert(seen.light && seen.heavy, 'no light() or heavy() frame found: ' + JSON.stringify(seen));
	const [lr, , lb] = seen.light.rgb, [hr, , hb] = seen.heavy.rgb;
	assert(/share\+/.test(seen.light.tip.replace(/\s/g, '')) && lr > lb + 40,
	       'light(): ' + seen.light.tip + ' rgb ' + seen.light.rgb);
	assert(/share\u2212/.test(seen.heavy.tip.replace(/\s/g, '')) && hb > hr + 40,
	       'heavy(): ' + seen.heavy.tip + ' rgb ' + seen.heavy.rgb);
});

H.run().then((failed) => process.exit(failed ? 1 : 0), (e) => {
	console.error(e);
	process.exit(1);
});
