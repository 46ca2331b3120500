#!/usr/bin/env node
// A greedy Yatzy engine over the yatzy-engine/1 protocol (JSON lines on stdin/stdout), for
// Node 20 with its standard library only. Run it from its folder: `node greedy.js`.
//
// It plays exactly like the harness's built-in `greedy` bot:
// - keeps: for the dice in hand and the rerolls left, the keep that maximises the expected best
//   immediate score at the end of this turn (the best allowed box score for the final dice plus
//   any extra bonus, under the sheet's context rules: key box, joker, forced order, servida),
//   worked out backwards over the rerolls; ties go to stopping, then to the first keep in the
//   harness's sub-keep order;
// - boxes: the allowed box with the largest immediate gain (its score, the extra bonus and an
//   upper bonus the box completes); ties go to the box with the lowest maximum score.
//
// Everything comes from the `rules` of the `newgame` message (the score table of every roll and
// the context rules), so any rule set of the harness's family works. Plans are cached per sheet
// state. Expected values are summed outcome by outcome in the harness's order with the same
// float64 probabilities, so that exact ties break the same way. See ../README.md.
//
// One option, `mistakes` (0..1, default 0): the share of decisions played at random instead (a
// uniformly random keep of the dice in hand, or a random box among those allowed), a difficulty
// knob `calibrate --param opt.mistakes` tunes. Its draws come from each position's game key, seat,
// column, turn and step only, never from a clock or a global stream, so every position gets the
// same answer in any batch and every evaluated value plays the same draws (common random numbers).
'use strict';

const PROTOCOL = 'yatzy-engine/1';
const HELLO = {
  type: 'hello', protocol: PROTOCOL, name: 'greedy-js', author: 'yatzy-harness examples', version: '1.0',
  // the rule sets checked game for game against the built-in greedy bot
  rules: ['scandinavian', 'yahtzee', 'standard', 'forced', 'maxi', 'generala'],
  options: [{
    name: 'mistakes', type: 'float', default: 0, min: 0, max: 1, differ: [0, 0.5],
    description: 'share of decisions played at random (a random keep, a random allowed box)',
  }],
};
const FACES = 6;

// Every multiset of `size` dice as an array of sorted faces, in the harness's order
// (Python's combinations_with_replacement of 1..6).
function multisets(size) {
  const out = [];
  const cur = [];
  const rec = (start, left) => {
    if (left === 0) { out.push(cur.slice()); return; }
    for (let f = start; f <= FACES; f++) { cur.push(f); rec(f, left - 1); cur.pop(); }
  };
  rec(1, size);
  return out;
}

function factorial(m) { let x = 1; for (let i = 2; i <= m; i++) x *= i; return x; }

// Probability that throwing faces.length fair dice gives these faces, computed as the harness does:
// the whole number of orders over 6**m (both exact in a double), one correctly rounded division.
function probability(faces) {
  let ways = factorial(faces.length);
  for (let f = 1; f <= FACES; f++) ways = Math.floor(ways / factorial(faces.filter((x) => x === f).length));
  let total = 1;
  for (let i = 0; i < faces.length; i++) total *= FACES;
  return ways / total;
}

// splitmix64's finaliser on BigInts: the draws of one position from its key, seat, column, turn, step.
const MASK64 = (1n << 64n) - 1n;
function mix(x) {
  x = (x + 0x9e3779b97f4a7c15n) & MASK64;
  x = ((x ^ (x >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  x = ((x ^ (x >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return x ^ (x >> 31n);
}

// [u, bits]: u uniform in [0, 1) (is this decision a mistake?) and 53 more random bits (which one).
function draws(key, seat, column, turn, step) {
  const x = mix(BigInt('0x' + key) ^ BigInt(((seat * 64 + column) * 256 + turn) * 256 + step));
  const y = mix(x);
  return [Number(x >> 11n) / 2 ** 53, y >> 11n];
}

const text = (faces) => faces.slice().sort((a, b) => a - b).join('');
const counts = (faces) => { const c = [0, 0, 0, 0, 0, 0]; for (const f of faces) c[f - 1]++; return c; };

class Game {
  constructor(rules) {
    const n = this.n = rules.dice | 0;
    if (!(n >= 1) || !Array.isArray(rules.rolls) || !Array.isArray(rules.boxes) || !Array.isArray(rules.scores)) {
      throw new Error('newgame rules need dice, rolls, boxes and scores');
    }
    this.rollText = rules.rolls.map(String);
    this.rollIndex = new Map(this.rollText.map((s, i) => [s, i]));
    const R = this.R = this.rollText.length;
    const boxes = rules.boxes;
    const NB = this.NB = boxes.length;
    if (NB > 30) throw new Error('at most 30 boxes');
    this.boxNames = boxes.map((b) => b.name);
    const flat = (rows) => {
      const t = new Int32Array(R * NB);
      for (let r = 0; r < R; r++) for (let b = 0; b < NB; b++) t[r * NB + b] = rows[r][b];
      return t;
    };
    this.table = flat(rules.scores);
    this.tableFirst = rules.scores_first ? flat(rules.scores_first) : this.table;
    this.servida = this.table.some((v, i) => v !== this.tableFirst[i]);
    this.upperFace = Int32Array.from(boxes, (b) => b.face || 0);
    this.upperMask = 0;
    for (let b = 0; b < NB; b++) if (this.upperFace[b] > 0) this.upperMask |= 1 << b;
    this.requiresKey = boxes.map((b) => !!b.requires_key);
    this.anyRequiresKey = this.requiresKey.some((x) => x);
    this.jokerValue = Int32Array.from(boxes, (b) => (b.joker_value === null || b.joker_value === undefined ? -1 : b.joker_value));
    this.keyBox = rules.key_box === null || rules.key_box === undefined ? -1 : this.boxNames.indexOf(rules.key_box);
    this.joker = !!rules.joker;
    this.extraBonus = rules.extra_yatzy_bonus | 0;
    this.forced = !!rules.forced;
    this.threshold = rules.bonus.threshold | 0;
    this.bonusValue = rules.bonus.value | 0;
    // boxes by their maximum score (stable): the order box ties are broken in
    const boxMax = new Array(NB).fill(-Infinity);
    for (let r = 0; r < R; r++) {
      for (let b = 0; b < NB; b++) {
        boxMax[b] = Math.max(boxMax[b], this.table[r * NB + b], this.tableFirst[r * NB + b]);
      }
    }
    for (let b = 0; b < NB; b++) boxMax[b] = Math.max(boxMax[b], this.jokerValue[b]);
    this.cheapest = Array.from({ length: NB }, (_, b) => b).sort((a, b) => boxMax[a] - boxMax[b]);

    // all-alike rolls: face of each roll (0 if not all alike) and its face box (the last one)
    this.yatzyFace = new Int32Array(R);
    this.rollText.forEach((s, r) => { if (new Set(s).size === 1) this.yatzyFace[r] = Number(s[0]); });

    // keeps: every multiset of 0..n dice, by size, in the harness's order
    const keeps = [];
    for (let size = 0; size <= n; size++) keeps.push(...multisets(size));
    const K = this.K = keeps.length;
    this.keepText = keeps.map((k) => k.join(''));
    const keepIndex = new Map(this.keepText.map((s, i) => [s, i]));
    // reroll transitions (CSR, as harness/game/dice.py builds them): keep k rerolls into
    // transRoll[transPtr[k] .. transPtr[k+1]) with probabilities transProb[...]
    const ptr = [0];
    const tRoll = [];
    const tProb = [];
    const outcomes = [];
    for (let m = 0; m <= n; m++) outcomes.push(multisets(m).map((o) => [o, probability(o)]));
    for (const k of keeps) {
      for (const [o, p] of outcomes[n - k.length]) {
        const r = this.rollIndex.get(text(k.concat(o)));
        if (r === undefined) throw new Error('rules.rolls does not hold every roll of the dice');
        tRoll.push(r);
        tProb.push(p);
      }
      ptr.push(tRoll.length);
    }
    this.transPtr = Int32Array.from(ptr);
    this.transRoll = Int32Array.from(tRoll);
    this.transProb = Float64Array.from(tProb);
    // each roll's proper sub-keeps in keep order (stopping, the whole roll, is handled apart)
    const sPtr = [0];
    const sKeep = [];
    this.rollAsKeep = new Int32Array(R);
    const keepCounts = keeps.map(counts);
    this.rollText.forEach((s, r) => {
      const faces = Array.from(s, Number);
      this.rollAsKeep[r] = keepIndex.get(text(faces));
      const c = counts(faces);
      for (let k = 0; k < K; k++) {
        if (keeps[k].length < n && keepCounts[k].every((x, f) => x <= c[f])) sKeep.push(k);
      }
      sPtr.push(sKeep.length);
    });
    this.subPtr = Int32Array.from(sPtr);
    this.subKeep = Int32Array.from(sKeep);
    this.ek = new Float64Array(K);
    this.row = new Int32Array(NB);
    // the cache: state (filled + flag * 2**30) -> its plan
    this.plans = new Map();
  }

  // Scores of roll r in every box (into this.row) and the allowed mask and extra bonus:
  // harness/game/scoring.py score_options.
  scoreOptions(r, first, flag, filled) {
    const NB = this.NB;
    const tab = first ? this.tableFirst : this.table;
    const row = this.row;
    for (let b = 0; b < NB; b++) row[b] = this.requiresKey[b] && !flag ? 0 : tab[r * NB + b];
    const open = ((2 ** NB - 1) & ~filled) | 0;
    let allowed = this.forced ? open & -open : open;
    let extra = 0;
    if (this.keyBox >= 0 && this.yatzyFace[r] > 0) {
      if (flag) extra = this.extraBonus;
      if (this.joker && (filled >> this.keyBox) & 1) {
        for (let b = 0; b < NB; b++) if (this.jokerValue[b] >= 0) row[b] = this.jokerValue[b];
        if (!this.forced) {
          let faceBox = -1;
          for (let b = 0; b < NB; b++) if (this.upperFace[b] === this.yatzyFace[r]) faceBox = b;
          if (faceBox >= 0 && (open >> faceBox) & 1) allowed = 1 << faceBox;
          else if (open & ~this.upperMask) allowed = open & ~this.upperMask;
        }
      }
    }
    return [allowed, extra];
  }

  // (R) the best allowed box score + extra bonus of every roll in one state: best_immediate.
  stopValues(filled, flag, first) {
    const out = new Float64Array(this.R);
    const row = this.row;
    for (let r = 0; r < this.R; r++) {
      const [allowed, extra] = this.scoreOptions(r, first, flag, filled);
      let best = -1;
      for (let b = 0; b < this.NB; b++) if ((allowed >> b) & 1 && row[b] > best) best = row[b];
      out[r] = best + extra;
    }
    return out;
  }

  // ek[k] = expected v after rerolling the dice keep k does not keep (harness/game/turn.py
  // keep_expectations: one sum per keep, outcome by outcome in the table's order)
  expectations(v) {
    const { transPtr, transRoll, transProb, ek } = this;
    for (let k = 0; k < this.K; k++) {
      let acc = 0.0;
      for (let t = transPtr[k]; t < transPtr[k + 1]; t++) acc += transProb[t] * v[transRoll[t]];
      ek[k] = acc;
    }
    return ek;
  }

  // For each roll: stop, or the first sub-keep strictly better (harness/game/turn.py best_keeps).
  bestKeeps(stop, ek, value) {
    const keep = new Int32Array(this.R);
    for (let r = 0; r < this.R; r++) {
      let best = stop[r];
      let arg = this.rollAsKeep[r];
      for (let s = this.subPtr[r]; s < this.subPtr[r + 1]; s++) {
        const k = this.subKeep[s];
        if (ek[k] > best) { best = ek[k]; arg = k; }
      }
      if (value) value[r] = best;
      keep[r] = arg;
    }
    return keep;
  }

  // The keep table (R) of a state with `rerolls` rerolls left, on the turn's first roll or not.
  plan(filled, flag, rerolls, first) {
    const key = filled + (flag ? 2 ** 30 : 0);
    let p = this.plans.get(key);
    if (p === undefined) {
      const tl = this.stopValues(filled, flag, false);
      const tf = this.servida ? this.stopValues(filled, flag, true) : tl;
      // values[j]: after a reroll with j rerolls left; keeps / first: by rerolls left
      p = { tl, tf, values: [tl], keeps: [null], first: [null] };
      this.plans.set(key, p);
    }
    while (p.values.length <= rerolls) {
      const ek = this.expectations(p.values[p.values.length - 1]);
      const value = new Float64Array(this.R);
      const keep = this.bestKeeps(p.tl, ek, value);
      p.values.push(value);
      p.keeps.push(keep);
      p.first.push(this.servida ? this.bestKeeps(p.tf, ek, null) : keep);
    }
    return first ? p.first[rerolls] : p.keeps[rerolls];
  }

  keep(msg, n) {
    const NB = this.NB;
    const out = new Array(n);
    const col = (name) => {
      const x = msg[name];
      return Array.isArray(x) ? (i) => x[i] : () => x;
    };
    const left = col('rolls_left');
    const step = col('step');
    for (let i = 0; i < n; i++) {
      const r = this.rollIndex.get(msg.dice[i]);
      if (r === undefined) throw new Error(`dice[${i}] is not a roll of these dice`);
      const sheet = msg.sheet[i];
      let filled = 0;
      for (let b = 0; b < NB; b++) if (sheet[b] >= 0) filled |= 1 << b;
      const flag = this.keyBox >= 0 && sheet[this.keyBox] > 0;
      const rerolls = left(i);
      if (!(rerolls >= 1)) throw new Error(`rolls_left[${i}] must be at least 1`);
      out[i] = this.keepText[this.plan(filled, flag, rerolls, step(i) === 1)[r]];
    }
    return out;
  }

  box(msg, n) {
    const NB = this.NB;
    const T = this.threshold;
    const out = new Array(n);
    const extras = msg.extra;
    for (let i = 0; i < n; i++) {
      const opts = msg.options[i];
      const sheet = msg.sheet[i];
      const extra = Array.isArray(extras) ? extras[i] : extras;
      let upper = 0;
      for (let b = 0; b < NB; b++) if (this.upperFace[b] > 0 && sheet[b] > 0) upper += sheet[b];
      let best = -Infinity;
      let arg = -1;
      for (const b of this.cheapest) {
        if (opts[b] < 0) continue; // a box the rules do not allow now
        let g = opts[b] + extra;
        if (this.upperFace[b] > 0 && upper < T && T <= upper + opts[b]) g += this.bonusValue;
        if (g > best) { best = g; arg = b; }
      }
      if (arg < 0) throw new Error(`game ${msg.game[i]}: no box is allowed`);
      out[i] = arg;
    }
    return out;
  }
}

let game = null;
let mistakes = 0;

// The option values of a newgame, checked against the declaration (an error reply otherwise).
function readOptions(options) {
  const o = options || {};
  for (const name of Object.keys(o)) {
    if (name !== 'mistakes') throw new Error(`unknown option ${JSON.stringify(name)} (options: mistakes)`);
  }
  const m = o.mistakes === undefined ? 0 : Number(o.mistakes);
  if (!(m >= 0 && m <= 1)) throw new Error(`option mistakes must be a number in [0, 1], got ${JSON.stringify(o.mistakes)}`);
  return m;
}

// Replace the greedy choices of the positions whose draw says "mistake" by random legal ones.
function blunder(msg, kind, choice) {
  if (mistakes <= 0) return choice;
  const col = (name) => (Array.isArray(msg[name]) ? (i) => msg[name][i] : () => msg[name]);
  const seat = col('seat'); const column = col('column'); const turn = col('turn'); const step = col('step');
  for (let i = 0; i < choice.length; i++) {
    const [u, bits] = draws(msg.key[i], seat(i), column(i), turn(i), step(i));
    if (u >= mistakes) continue;
    if (kind === 'keep') {  // each die kept or rerolled on one bit
      const dice = msg.dice[i];
      let kept = '';
      for (let d = 0; d < dice.length; d++) if ((bits >> BigInt(d)) & 1n) kept += dice[d];
      choice[i] = kept;
    } else {  // one of the allowed boxes, uniformly
      const allowed = [];
      msg.options[i].forEach((v, b) => { if (v >= 0) allowed.push(b); });
      choice[i] = allowed[Number(bits % BigInt(allowed.length))];
    }
  }
  return choice;
}

function handle(msg) {
  const t = msg.type;
  if (t === 'hello') return HELLO;
  if (t === 'newgame') {  // the rules and the options, sent again whenever either changes
    mistakes = readOptions(msg.options);
    game = new Game(msg.rules || {});
    return { type: 'ready', id: msg.id };
  }
  if (t === 'ping') return { type: 'pong', id: msg.id };
  if (t === 'decide') {
    if (game === null) throw new Error('decide before newgame');
    const kind = msg.kind;
    if (!Array.isArray(msg.game)) throw new Error("'game' must be a list");
    const n = msg.game.length;
    let choice;
    if (kind === 'keep') choice = game.keep(msg, n);
    else if (kind === 'box') choice = game.box(msg, n);
    else throw new Error(`unknown decision kind ${JSON.stringify(kind)}`);
    choice = blunder(msg, kind, choice);
    return { type: 'answer', id: msg.id, game: msg.game, [kind]: choice };
  }
  throw new Error(`unknown message type ${JSON.stringify(t)}`);
}

// Stop reading; Node exits once the replies already written have gone out.
let done = false;
function quit() {
  done = true;
  process.stdin.destroy();
}

// One line in, one line out; never crash on bad input.
function onLine(line) {
  if (done || !line.trim()) return;
  let id = null;
  let reply;
  try {
    const msg = JSON.parse(line);
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) throw new Error('a message must be a JSON object');
    if (msg.id !== undefined) id = msg.id;
    if (msg.type === 'quit') { quit(); return; }
    reply = handle(msg);
  } catch (err) {
    reply = { type: 'error', id, message: String(err && err.message ? err.message : err).slice(0, 500) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}

// Lines are split by hand (batches can be megabytes long): chunks are kept until a newline.
let pending = [];
process.stdin.on('data', (chunk) => {
  let start = 0;
  let nl;
  while ((nl = chunk.indexOf(10, start)) >= 0) {
    pending.push(chunk.subarray(start, nl));
    const line = Buffer.concat(pending).toString('utf8');
    pending = [];
    onLine(line);
    start = nl + 1;
  }
  if (start < chunk.length) pending.push(chunk.subarray(start));
});
process.stdin.on('end', () => {  // end of input: answer a last unterminated line, then exit
  if (pending.length) onLine(Buffer.concat(pending).toString('utf8'));
});
