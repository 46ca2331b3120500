// The demo page: a person plays one column of Yatzy against an exported level, in the page.
// Query: ?level=DIR/ (the export directory, default level/), seed=N and game=N (the harness's dice
// stream of that game: seat 0 is you, seat 1 the level), bench=N (no game: time the table's load
// and N decisions, for benchmarks/bench_export.py). window.demo holds what a test reads: the level's
// decisions with their positions (log), the timings, the sheets.
const q = new URLSearchParams(location.search);
const levelDir = new URL(q.get('level') || 'level/', location.href);
const seed = BigInt(q.get('seed') || '1');
const gameNo = BigInt(q.get('game') || '0');
const $ = (id) => document.getElementById(id);
const demo = { log: [], ready: false, over: false, error: null, timings: {} };
window.demo = demo;

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

async function start() {
  const mod = await import(new URL('level.mjs', levelDir).href);
  const t0 = performance.now();
  const manifest = await (await fetch(new URL('manifest.json', levelDir))).json();
  const table = await fetchBytes(new URL(manifest.table.file, levelDir));
  const t1 = performance.now();
  const level = await mod.load(manifest, table);
  const t2 = performance.now();
  demo.timings = { fetch_ms: t1 - t0, load_decode_ms: t2 - t1 };
  if (q.get('bench')) return bench(mod, level, Number(q.get('bench')));
  return new Game(mod, level, manifest);
}

// A decision's time in the page: positions drawn from the harness's dice on random sheets
function bench(mod, level, n) {
  const R = level.rules;
  const key = mod.gameKey(seed, gameNo);
  // the browser's clock ticks in 0.1 ms: a decision's time is taken as the mean of a group of 10
  // consecutive decisions (each on a sheet of its own: a state worked out afresh, the worst case)
  const positions = [];
  for (let i = 0; i < n; i++) {
    const sheet = new Array(R.NB).fill(-1);
    const open = [];
    for (let b = 0; b < R.NB; b++) open.push(b);
    const filledN = i % R.NB;
    for (let k = 0; k < filledN; k++) {
      const b = R.forced ? k : open.splice(Number(mod.drawFaces(key, 2, i, k, 1)[0] * 7919 % open.length), 1)[0];
      sheet[b] = 0;
    }
    const dice = mod.drawFaces(key, 0, i, 0, R.n).sort().join('');
    const left = i % (R.rr + 1);
    positions.push({ dice, sheet, rolls_left: left, key: mod.keyText(key), seat: 0, column: 1, turn: filledN + 1,
                     step: left ? R.rr - left + 1 : 0, first: left === R.rr });
  }
  const times = [];
  const G = 10;
  for (let i = 0; i + G <= n; i += G) {
    const a = performance.now();
    for (let k = i; k < i + G; k++) level.decide(positions[k]);
    times.push((performance.now() - a) / G);
  }
  times.sort((x, y) => x - y);
  const g = times.length;
  demo.timings.decisions = g * G;
  demo.timings.decision_median_ms = times[Math.floor(g / 2)];
  demo.timings.decision_p90_ms = times[Math.floor(g * 0.9)];
  demo.ready = true;
  $('status').textContent = `benchmark: load+decode ${demo.timings.load_decode_ms.toFixed(1)} ms, ` +
    `decision median ${demo.timings.decision_median_ms.toFixed(3)} ms`;
}

class Game {
  constructor(mod, level, manifest) {
    this.mod = mod;
    this.level = level;
    this.R = level.rules;
    this.key = mod.gameKey(seed, gameNo);
    this.keyHex = mod.keyText(this.key);
    const name = manifest.level || manifest.spec;
    $('level-name').textContent = name;
    $('about').textContent = `${manifest.rules.name}: you against level ${name} ` +
      `(mean ${manifest.figures ? manifest.figures.mean.toFixed(2) : '?'} points a game)`;
    $('game').textContent = `seed ${seed}, game ${gameNo}`;
    $('roll').addEventListener('click', () => this.roll());
    $('again').addEventListener('click', () => location.reload());
    this.sheets = [new Array(this.R.NB).fill(-1), new Array(this.R.NB).fill(-1)];
    this.totals = [0, 0];
    this.turn = 0;
    this.drawSheet();
    this.startTurn();
    demo.ready = true;
    demo.sheets = this.sheets;
    demo.totals = this.totals;
  }

  startTurn() {
    this.dice = [];
    this.held = [];
    this.rollNo = 0;
    this.rollsLeft = this.R.rr;
    $('roll').disabled = false;
    $('roll').textContent = 'Roll';
    $('status').textContent = `turn ${this.turn + 1} of ${this.R.NB}: your roll`;
    this.drawDice();
  }

  roll() {
    if (this.rollNo === 0) {
      this.dice = this.mod.drawFaces(this.key, 0, this.turn, 0, this.R.n);
    } else {
      const kept = this.dice.filter((_, i) => this.held[i]);
      const fresh = this.mod.drawFaces(this.key, 0, this.turn, this.rollNo, this.R.n - kept.length);
      this.dice = kept.concat(fresh);
      this.rollsLeft -= 1;
    }
    this.held = this.dice.map(() => false);
    this.rollNo += 1;
    $('roll').textContent = 'Reroll';
    $('roll').disabled = this.rollsLeft === 0;
    $('status').textContent = `turn ${this.turn + 1}: ${this.rollsLeft ? 'hold dice and reroll, or ' : ''}choose a box`;
    this.drawDice();
    this.offerBoxes();
  }

  position(seat, rollsLeft, first, dice) {
    return { dice: dice.slice().sort().join(''), sheet: this.sheets[seat].slice(), rolls_left: rollsLeft,
             key: this.keyHex, seat, column: 1, turn: this.turn + 1, step: rollsLeft ? this.R.rr - rollsLeft + 1 : 0,
             first, totals: this.totals.slice() };
  }

  offerBoxes() {
    const pos = this.position(0, 0, this.rollNo === 1, this.dice);
    const { scores, extra } = this.level.scores(pos);
    this.offer = { scores, extra, first: this.rollNo === 1 };
    this.drawSheet();
  }

  write(seat, box, score, extra) {
    const R = this.R;
    const sheet = this.sheets[seat];
    const upper = (s) => s.reduce((a, x, b) => a + (R.isUpper[b] && x > 0 ? x : 0), 0);
    const before = upper(sheet);
    sheet[box] = score;
    const crossed = R.bonusValue && before < R.threshold && upper(sheet) >= R.threshold ? R.bonusValue : 0;
    this.totals[seat] += score + extra + crossed;
  }

  choose(box) {
    const { scores, extra } = this.offer;
    this.write(0, box, scores[box], extra);
    this.offer = null;
    this.dice = [];
    this.drawDice();
    this.levelTurn();
    this.turn += 1;
    this.drawSheet();
    if (this.turn === this.R.NB) return this.finish();
    this.startTurn();
  }

  // the level's turn: its own dice from the stream (seat 1), a decision at every roll
  levelTurn() {
    const R = this.R, mod = this.mod;
    let dice = mod.drawFaces(this.key, 1, this.turn, 0, R.n);
    let left = R.rr;
    let rollNo = 0;
    const say = [];
    for (;;) {
      const pos = this.position(1, left, rollNo === 0, dice);
      const d = this.level.decide(pos);
      demo.log.push({ position: pos, decision: d });
      if (left === 0) {
        const { scores, extra } = this.level.scores(pos);
        const box = R.boxNames.indexOf(d.box);
        this.write(1, box, scores[box], extra);
        say.push(`${pos.dice} → ${d.box} ${scores[box]}`);
        break;
      }
      say.push(`${pos.dice} keep ${d.keep || 'nothing'}`);
      if (d.keep.length === R.n) { left = 0; continue; } // stop: the box with these dice
      rollNo += 1;
      left -= 1;
      dice = d.keep.split('').map(Number).concat(mod.drawFaces(this.key, 1, this.turn, rollNo, R.n - d.keep.length));
    }
    const li = document.createElement('li');
    li.textContent = say.join('; ');
    $('log').appendChild(li);
    $('log').scrollTop = $('log').scrollHeight;
  }

  finish() {
    demo.over = true;
    const [you, it] = this.totals;
    $('status').textContent = `game over: you ${you}, the level ${it} — ${you > it ? 'you win' : you < it ? 'the level wins' : 'a draw'}`;
    $('roll').disabled = true;
    $('again').hidden = false;
  }

  drawDice() {
    const box = $('dice');
    box.replaceChildren(...this.dice.map((f, i) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'die' + (this.held[i] ? ' held' : '');
      b.textContent = String(f);
      b.dataset.index = String(i);
      b.disabled = this.rollsLeft === 0;
      b.setAttribute('aria-pressed', String(!!this.held[i]));
      b.addEventListener('click', () => { this.held[i] = !this.held[i]; this.drawDice(); });
      return b;
    }));
  }

  drawSheet() {
    const R = this.R;
    const body = $('sheet').tBodies[0];
    body.replaceChildren();
    const up = [0, 0];
    for (let b = 0; b < R.NB; b++) {
      const tr = document.createElement('tr');
      const name = document.createElement('td');
      name.textContent = R.boxNames[b].replace(/_/g, ' ');
      tr.appendChild(name);
      for (let seat = 0; seat < 2; seat++) {
        const td = document.createElement('td');
        td.className = 'num';
        const v = this.sheets[seat][b];
        if (R.isUpper[b] && v > 0) up[seat] += v;
        if (v >= 0) td.textContent = String(v);
        else if (seat === 0 && this.offer && this.offer.scores[b] >= 0) {
          td.textContent = String(this.offer.scores[b]);
          td.className = 'num option';
          td.dataset.box = R.boxNames[b];
          td.title = 'write it here';
          td.addEventListener('click', () => this.choose(b));
        }
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    const foot = $('sheet').tFoot;
    const row = (label, a, b) => `<tr><td>${label}</td><td class="num">${a}</td><td class="num">${b}</td></tr>`;
    foot.innerHTML = (R.bonusValue ? row(`upper (bonus ${R.bonusValue} at ${R.threshold})`, up[0], up[1]) : '') +
      row('total', this.totals[0], this.totals[1]);
  }
}

start().catch((err) => {
  demo.error = String(err && err.message ? err.message : err);
  $('status').textContent = `cannot load the level: ${demo.error}`;
  throw err;
});
