// SPDX-License-Identifier: MIT
// Loads a `report --format speedscope` file, or a `--format chrome-trace` one (speedscope imports
// Trace Event JSON as Perfetto does), into the real speedscope app (the npm package's built
// release, offline, in Debian's chromium through the same harness as the report's tests) and
// checks what it shows against the file: one profile per thread with its total, and in the
// Sandwich view of each profile the function names of its frames.
// Usage: node speedscope.js FILE [NAME...]   (NAMEs: functions that must be shown somewhere)
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { Harness, assert, eq } = require('./lib');

const file = path.resolve(process.argv[2]);
const wanted = process.argv.slice(3);
const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
const profiles = doc.traceEvents ? fromTrace(doc.traceEvents) : fromSpeedscope(doc);
const app = path.join(__dirname, 'node_modules/speedscope/dist/release/index.html');
const H = new Harness(path.dirname(app));

// speedscope's own command line opens the app with #localProfilePath= a script that hands it
// the file (speedscope.loadFileFromBase64): the way it loads a file offline, without a server.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ls-speedscope-'));
const loader = path.join(tmp, 'load.js');
fs.writeFileSync(loader, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(file))}, ` +
		 `${JSON.stringify(fs.readFileSync(file).toString('base64'))})`);

// What each thread's profile must show: its name (null: speedscope names it), the range its
// total may be in (ns), and the names of its frames.
function fromSpeedscope(d) {
	return d.profiles.map((p) => {
		const total = p.weights.reduce((a, b) => a + b, 0);
		return { name: p.name, min: total, max: total,
			 frames: [...new Set(p.samples.flat())].map((f) => d.shared.frames[f].name) };
	});
}

// a trace's slices by thread, in pid and tid order: the total is at least the time the outermost
// slices cover and at most the thread's first-to-last extent
function fromTrace(events) {
	const by = new Map();
	for (const e of events.filter((e) => e.ph === 'X')) {
		const k = `${e.pid}/${e.tid}`;
		if (!by.has(k))
			by.set(k, []);
		by.get(k).push(e);
	}
	const threads = [...by.values()].sort((a, b) => a[0].pid - b[0].pid || a[0].tid - b[0].tid);
	return threads.map((l) => {
		l.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
		let covered = 0, end = -Infinity;
		for (const e of l) {
			if (e.ts >= end - 0.001)
				covered += e.dur;
			end = Math.max(end, e.ts + e.dur);
		}
		return { name: null, min: covered * 1e3, max: (end - l[0].ts) * 1e3,
			 frames: [...new Set(l.map((e) => e.name))] };
	});
}

// "207.52ms" -> ns, as speedscope prints a nanosecond total
function parseTime(s) {
	const m = /^([\d.]+)(ns|µs|us|ms|s|min)$/.exec(s.trim());
	assert(m, 'not a time: ' + s);
	return Number(m[1]) * { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, min: 60e9 }[m[2]];
}

// Sandwich view rows of the shown profile, from the page text: total, self, symbol name.
async function sandwichNames(page) {
	const text = await page.evaluate(() => document.body.innerText);
	const lines = text.split('\n').map((l) => l.trim());
	const start = lines.findIndex((l) => /^Total\s+Self\s+Symbol Name$/.test(l));
	assert(start >= 0, 'no Sandwich table in the page');
	const names = [];
	for (let i = start + 1; i + 2 < lines.length + 1 && /^[\d.]+\S+ \(/.test(lines[i] || ''); i += 3)
		names.push(lines[i + 2]);
	return names;
}

const seen = new Set();

H.test('speedscope opens the export: profiles, totals, and frame names per thread', async (page) => {
	const url = 'file://' + app + '#localProfilePath=' + loader;
	await page.goto(url);
	await page.waitForFunction(() => / - speedscope$/.test(document.title), null, { timeout: 30000 });
	if (!doc.traceEvents)
		eq(await page.title(), `${doc.name} - speedscope`, 'the file name in the title');
	// the profile list (hidden until clicked, but in the page): one per thread, with its total
	const listed = await page.$$eval('tr[title]', (trs) => trs.map((tr) => ({
		name: tr.title, total: tr.cells[tr.cells.length - 1].textContent })));
	if (doc.traceEvents)
		eq(listed.length, profiles.length, 'one profile per thread with slices');
	else
		eq(listed.map((p) => p.name), profiles.map((p) => p.name), 'one profile per thread, in order');
	listed.forEach((p, i) => {
		const { min, max } = profiles[i], got = parseTime(p.total);
		assert(got >= min * 0.995 - 1e4 && got <= max * 1.005 + 1e4,
		       `${p.name}: speedscope shows ${p.total}, the file's thread has ${min}..${max} ns`);
	});
	await page.click('text=Sandwich');
	// the active profile first, then the others in turn ('n' is speedscope's next-profile key)
	const n = profiles.length;
	let idx = doc.activeProfileIndex || 0;
	for (let k = 0; k < n; k++, idx = (idx + 1) % n) {
		const p = profiles[idx];
		const title = p.name || listed[idx].name;
		await page.waitForFunction((t) => document.body.innerText.includes(`${t} (`),
					   title, { timeout: 10000 });
		const shown = await sandwichNames(page);
		const expected = [...p.frames].sort();
		// a long table is drawn only as far as it is visible: then the shown rows are a subset
		if (expected.length <= shown.length)
			eq([...shown].sort(), expected, `${title}: the Sandwich view lists its frames`);
		for (const s of shown)
			assert(expected.includes(s), `${title}: ${s} is not a frame of this thread`);
		assert(shown.length > 0, `${title}: nothing in the Sandwich view`);
		shown.forEach((s) => seen.add(s));
		if (k + 1 < n)
			await page.keyboard.press('n');
	}
	for (const w of wanted)
		assert(seen.has(w), `function ${w} is not shown in any thread`);
}, { viewport: { width: 1400, height: 4000 } });

H.run().then((failed) => {
	fs.rmSync(tmp, { recursive: true, force: true });
	console.log(`speedscope: ${profiles.length} profiles, ${seen.size} function names shown`);
	process.exit(failed ? 1 : 0);
}, (e) => {
	console.error(e);
	process.exit(2);
});
