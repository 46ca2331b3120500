// A tuned level of yatzy-harness, exported to JavaScript: a self-contained ES module with no
// dependencies (browsers and Node 20). `yatzy-harness export` writes it beside the level's value
// table and manifest; docs/ship-a-level.md says how to use it.
//
//   import { load } from './level.mjs';
//   const level = await load(manifestObject, tableBytes);   // the .bin.gz as fetched (Uint8Array)
//   level.decide(position)   // -> {keep: "66"} or {box: "sixes"}
//   level.values(position)   // -> every option with its value, as `yatzy-harness advise` gives
//
// A position has the engine protocol's fields (docs/engines.md): dice ("11366"), sheet (a score a
// box, -1 open), rolls_left, key (the game key, 16 hex digits), seat, column, turn, step, and for a
// box decision first (the dice were made on the turn's first roll: servida). totals (the running
// totals) is optional: values() adds the seat's total (else the sheet's points) to each option.
//
// Every option's value is computed as the harness's solver bot computes it
// (harness/exact/kernels/solver.py: stop_one, turn_one, keep_arg_one, choose_boxes, softmax_pick),
// the same operations in the same order (JavaScript never fuses a multiply and an add), from the
// same table of turn-start values, so values and decisions are the harness's to the last bit. The
// rule set is data (the protocol's newgame description): its score tables and context rules.
// The randomised levels draw from the harness's counter-based generator (harness/game/rng.py,
// SplitMix64 on BigInt) and weigh options with fdlibm's exp (harness/exact/kernels/rows.py).

export const HARNESS_VERSION = '__HARNESS_VERSION__';
export const TABLE_FORMAT = 'yatzy-level-table/1';
const NEG = -1.0e300;
const TIE = 1e-9; // harness/decisions/scale.py: options within it of the best are ties
const CHOOSE_STEP = 255;

// ------------------------------------------------------------------------------------------------
// the counter-based generator (harness/game/rng.py)

const MASK64 = (1n << 64n) - 1n;
const M1 = 0xBF58476D1CE4E5B9n;
const M2 = 0x94D049BB133111EBn;
const GOLDEN = 0x9E3779B97F4A7C15n;
const STRATEGY = 2;
const SEATS = 16, TURNS = 4096, STEPS = 256, WIDTH = 64;
const INV53 = 1.0 / 2 ** 53;

export function mix64(x) {
  x ^= x >> 30n;
  x = (x * M1) & MASK64;
  x ^= x >> 27n;
  x = (x * M2) & MASK64;
  return x ^ (x >> 31n);
}

/** The harness's uniforms(keys, seat, turn, step, width) for one game key (a BigInt). */
export function uniforms(key, seat, turn, step, width) {
  const base = BigInt((((STRATEGY * SEATS + seat) * TURNS + turn) * STEPS + step) * WIDTH);
  const out = new Array(width);
  for (let j = 0; j < width; j++) {
    const c = (base + BigInt(j)) & MASK64;
    const h = mix64(key ^ mix64((c * GOLDEN) & MASK64));
    out[j] = Number(h >> 11n) * INV53;
  }
  return out;
}

/** The harness's game key of game ``game`` of a run seeded ``seed`` (game_keys; BigInts). */
export function gameKey(seed, game) {
  const s = mix64(BigInt(seed) & MASK64);
  return mix64(s ^ (((BigInt(game) + 1n) * GOLDEN) & MASK64));
}

/** The harness's fresh draw of n dice (draw_faces) for (seat, turn, roll) of a game key: roll 0 is the
 * turn's first, roll j the j-th reroll's (a reroll of m dice takes the first m). */
export function drawFaces(key, seat, turn, roll, n) {
  const base = BigInt((((1 * SEATS + seat) * TURNS + turn) * STEPS + roll) * WIDTH);
  const out = [];
  for (let j = 0; j < n; j++) {
    const h = mix64(key ^ mix64(((base + BigInt(j)) * GOLDEN) & MASK64));
    out.push(Number(((h >> 11n) * 6n) >> 53n) + 1);
  }
  return out;
}

/** A game key as the protocol writes it: 16 hex digits. */
export function keyText(key) { return key.toString(16).padStart(16, '0'); }

// ------------------------------------------------------------------------------------------------
// fdlibm's exp (harness/exact/kernels/rows.py exp_ieee), step for step

const O_THRESHOLD = 7.09782712893383973096e+02;
const U_THRESHOLD = -7.45133219101941108420e+02;
const LN2_HI = 6.93147180369123816490e-01;
const LN2_LO = 1.90821492927058770002e-10;
const INV_LN2 = 1.44269504088896338700e+00;
const P1 = 1.66666666666666019037e-01;
const P2 = -2.77777777770155933842e-03;
const P3 = 6.61375632143793436117e-05;
const P4 = -1.65339022054652515390e-06;
const P5 = 4.13813679705723846039e-08;
const TWO_M1000 = 2.0 ** -1000;
const bits = new DataView(new ArrayBuffer(8));

function pow2(k) {
  bits.setUint32(0, (k + 1023) << 20); // big-endian: the high word first
  bits.setUint32(4, 0);
  return bits.getFloat64(0);
}

export function expIeee(x) {
  if (x !== x) return x;
  if (x > O_THRESHOLD) return Infinity;
  if (x < U_THRESHOLD) return 0.0;
  const h = x >= 0.0 ? 0.5 : -0.5;
  const k = Math.trunc(INV_LN2 * x + h);
  const kd = k;
  const hi = x - kd * LN2_HI;
  const lo = kd * LN2_LO;
  const r = hi - lo;
  const t = r * r;
  const c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  const y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
  if (k < -1021) return y * pow2(k + 1000) * TWO_M1000;
  if (k > 1023) return y * pow2(k - 1) * 2.0;
  return y * pow2(k);
}

/** softmax_pick of harness/exact/kernels/solver.py: vals is overwritten with the weights. */
export function softmaxPick(vals, temperature, u) {
  const n = vals.length;
  let top = vals[0];
  for (let a = 1; a < n; a++) top = Math.max(top, vals[a]);
  let tot = 0.0;
  for (let a = 0; a < n; a++) {
    vals[a] = expIeee((vals[a] - top) / temperature);
    tot += vals[a];
  }
  const x = u * tot;
  let acc = 0.0;
  for (let a = 0; a < n; a++) {
    acc += vals[a];
    if (x < acc) return a;
  }
  for (let a = n - 1; a >= 0; a--) if (vals[a] > 0.0) return a;
  return n - 1;
}

// ------------------------------------------------------------------------------------------------
// dice and keeps as multisets (harness/game/dice.py, harness/exact/plan.py dice_tables)

function multisets(size) {
  const out = [];
  const cur = [];
  const rec = (start, left) => {
    if (left === 0) { out.push(cur.slice()); return; }
    for (let f = start; f <= 6; f++) { cur.push(f); rec(f, left - 1); cur.pop(); }
  };
  rec(1, size);
  return out;
}

function factorial(m) { let x = 1; for (let i = 2; i <= m; i++) x *= i; return x; }

function diceTables(n, rerolls) {
  const rolls = multisets(n);
  const keeps = [];
  for (let s = 0; s <= n; s++) for (const m of multisets(s)) keeps.push(m);
  const text = (faces) => faces.join('');
  const keepIndex = new Map(keeps.map((k, i) => [text(k), i]));
  const counts = (faces) => { const c = [0, 0, 0, 0, 0, 0]; for (const f of faces) c[f - 1]++; return c; };
  const ofCounts = (c) => { const f = []; for (let i = 0; i < 6; i++) for (let j = 0; j < c[i]; j++) f.push(i + 1); return f; };
  const K = keeps.length;
  const R = rolls.length;
  const nSmall = K - R;
  const add = new Int32Array(K * 6).fill(-1);
  const rem = new Int32Array(K * 6).fill(-1);
  const keepCounts = keeps.map(counts);
  for (let k = 0; k < K; k++) {
    const c = keepCounts[k];
    for (let f = 0; f < 6; f++) {
      if (keeps[k].length < n) { c[f]++; add[k * 6 + f] = keepIndex.get(text(ofCounts(c))); c[f]--; }
      if (c[f] > 0) { c[f]--; rem[k * 6 + f] = keepIndex.get(text(ofCounts(c))); c[f]++; }
    }
  }
  const rollProb = new Float64Array(R);
  let six = 1;
  for (let i = 0; i < n; i++) six *= 6;
  for (let r = 0; r < R; r++) {
    let ways = factorial(n);
    for (const c of keepCounts[nSmall + r]) ways = Math.floor(ways / factorial(c));
    rollProb[r] = ways / six; // one correctly rounded division, as the harness's ways / 6**n
  }
  // the sub-keeps of each roll in keep order, the whole roll (stop) last
  const subPtr = new Int32Array(R + 1);
  const subKeep = [];
  for (let r = 0; r < R; r++) {
    const rc = keepCounts[nSmall + r];
    for (let k = 0; k < nSmall; k++) {
      const kc = keepCounts[k];
      let fits = true;
      for (let f = 0; f < 6; f++) if (kc[f] > rc[f]) { fits = false; break; }
      if (fits) subKeep.push(k);
    }
    subKeep.push(nSmall + r);
    subPtr[r + 1] = subKeep.length;
  }
  return { n, rerolls, rolls, keeps, keepCounts, R, K, nSmall, add, rem, rollProb, subPtr,
           subKeep: Int32Array.from(subKeep), rollIndex: new Map(rolls.map((f, i) => [text(f), i])) };
}

// ------------------------------------------------------------------------------------------------
// the rule set as data and the solver's state layout (harness/exact/plan.py build_plan)

function uniqueSorted(xs) { return Array.from(new Set(xs)).sort((a, b) => a - b); }

function popcount(x) { let c = 0; while (x) { x &= x - 1; c++; } return c; }

export function compileRules(desc) {
  if (desc.saved_rolls) throw new Error(`rule set ${desc.name}: saved rolls are not exported (the table has ordinary turns only)`);
  const NB = desc.boxes.length;
  const n = desc.dice;
  const dk = diceTables(n, desc.rolls_per_turn - 1);
  desc.rolls.forEach((t, r) => {
    if (dk.rolls[r].join('') !== t) throw new Error(`rule set ${desc.name}: roll ${r} is ${t}, expected ${dk.rolls[r].join('')}`);
  });
  const table = Int16Array.from(desc.scores.flat());
  const tableFirst = desc.scores_first ? Int16Array.from(desc.scores_first.flat()) : table;
  const servida = !!desc.scores_first;
  const upperFace = desc.boxes.map((b) => b.face || 0);
  const isUpper = upperFace.map((f) => f > 0);
  const requiresKey = desc.boxes.map((b) => !!b.requires_key);
  const jokerValue = desc.boxes.map((b) => (b.joker_value === null || b.joker_value === undefined ? -1 : b.joker_value));
  const keyBox = desc.key_box === null || desc.key_box === undefined ? -1 : desc.boxes.findIndex((b) => b.name === desc.key_box);
  let upperMask = 0;
  for (let b = 0; b < NB; b++) if (isUpper[b]) upperMask |= 1 << b;
  const yatzyFace = new Int8Array(dk.R);
  for (let r = 0; r < dk.R; r++) {
    const f = dk.rolls[r];
    if (f[0] === f[n - 1]) yatzyFace[r] = f[0];
  }
  // every score each box can take, 0 included
  const boxVals = [];
  for (let b = 0; b < NB; b++) {
    const v = [0];
    for (let r = 0; r < dk.R; r++) { v.push(table[r * NB + b]); v.push(tableFirst[r * NB + b]); }
    if (jokerValue[b] >= 0) v.push(jokerValue[b]);
    boxVals.push(uniqueSorted(v));
  }
  let T = desc.bonus.threshold, bonus = desc.bonus.value;
  if (bonus === 0) { T = 0; bonus = 0; } else if (T === 0) { bonus = 0; }
  const upIdx = [];
  for (let b = 0; b < NB; b++) if (isUpper[b]) upIdx.push(b);
  const nUm = 1 << upIdx.length;
  const fullUm = nUm - 1;
  const nslot = new Int32Array(nUm);
  const slot = new Int32Array(nUm * (T + 1)).fill(-1);
  const ulist = [];
  for (let um = 0; um < nUm; um++) {
    let s = [0];
    if (um !== fullUm) {
      upIdx.forEach((b, j) => {
        if ((um >> j) & 1) {
          const next = [];
          for (const a of s) for (const v of boxVals[b]) next.push(Math.min(a + v, T));
          s = uniqueSorted(next);
        }
      });
    }
    nslot[um] = s.length;
    ulist.push(s);
    s.forEach((u, i) => { slot[um * (T + 1) + u] = i; });
  }
  for (let u = 0; u <= T; u++) slot[fullUm * (T + 1) + u] = 0;
  const umaskTable = new Int32Array(2 ** NB);
  for (let m = 0; m < 2 ** NB; m++) {
    let um = 0;
    for (let j = 0; j < upIdx.length; j++) um |= ((m >> upIdx[j]) & 1) << j;
    umaskTable[m] = um;
  }
  const umaskOf = (mask) => umaskTable[mask];
  // masks by number of filled boxes, then by value (the harness's lexsort)
  let valid = [];
  if (desc.forced) for (let i = 0; i <= NB; i++) valid.push((2 ** i) - 1);
  else {
    const byPop = Array.from({ length: NB + 1 }, () => []);
    for (let m = 0; m < 2 ** NB; m++) byPop[popcount(m)].push(m);
    valid = byPop.flat();
  }
  const F = keyBox >= 0 ? 2 : 1;
  const items = []; // [mask, flag, first state, slots]
  const base = new Int32Array((2 ** NB) * F).fill(-1);
  let off = 0;
  for (const m of valid) {
    const flags = F === 2 && ((m >> keyBox) & 1) ? [0, 1] : [0];
    for (const fl of flags) {
      const ns = nslot[umaskOf(m)];
      items.push([m, fl, off, ns]);
      base[m * F + fl] = off;
      off += ns;
    }
  }
  const rules = {
    name: desc.name, NB, n, dk, table, tableFirst, servida, upperFace, isUpper, requiresKey, jokerValue,
    keyBox, joker: !!desc.joker, extra: desc.extra_yatzy_bonus | 0, forced: !!desc.forced, upperMask,
    yatzyFace, boxVals, T, bonus, bonusValue: desc.bonus.value, threshold: desc.bonus.threshold, nslot, slot, ulist, umaskOf,
    F, items, base, nStates: off, boxNames: desc.boxes.map((b) => b.name), rr: desc.rolls_per_turn - 1,
  };
  // upper value rows of stop_one: wrow[b] + v
  rules.wrow = new Int32Array(NB);
  let w = 0;
  for (let b = 0; b < NB; b++) if (isUpper[b]) { rules.wrow[b] = w; w += boxVals[b].length; }
  rules.nWrows = w;
  return rules;
}

/** Flat index of the state (filled mask, upper subtotal, flag), or -1 when the layout has none. */
export function stateIndex(rules, mask, upper, flag) {
  const b = rules.base[mask * rules.F + (flag ? 1 : 0)];
  if (b < 0) return -1;
  const u = Math.min(upper, rules.T);
  const s = rules.slot[rules.umaskOf(mask) * (rules.T + 1) + u];
  return s < 0 ? -1 : b + s;
}

// ------------------------------------------------------------------------------------------------
// scoring in context (harness/game/scoring.py score_options, score_sheet)

function scoreOptions(R, r, first, flag, filled, out) {
  const NB = R.NB;
  const tab = first ? R.tableFirst : R.table;
  for (let b = 0; b < NB; b++) {
    let s = tab[r * NB + b];
    if (R.requiresKey[b] && !flag) s = 0;
    out[b] = s;
  }
  const open = ((2 ** NB) - 1) & ~filled;
  let allowed = open;
  if (R.forced) allowed = open & -open;
  let extra = 0;
  if (R.keyBox >= 0 && R.yatzyFace[r] > 0) {
    if (flag) extra = R.extra;
    if (R.joker && ((filled >> R.keyBox) & 1)) {
      for (let b = 0; b < NB; b++) if (R.jokerValue[b] >= 0) out[b] = R.jokerValue[b];
      if (!R.forced) {
        let faceBox = -1;
        for (let b = 0; b < NB; b++) if (R.upperFace[b] === R.yatzyFace[r]) faceBox = b;
        if (faceBox >= 0 && ((open >> faceBox) & 1)) allowed = 1 << faceBox;
        else if (open & ~R.upperMask) allowed = open & ~R.upperMask;
      }
    }
  }
  return [allowed, extra];
}

function scoreSheet(R, first, flag, filled) {
  const nR = R.dk.R, NB = R.NB;
  const rows = new Int16Array(nR * NB);
  const allowed = new Int32Array(nR);
  const extras = new Int16Array(nR);
  const row = new Int16Array(NB);
  for (let r = 0; r < nR; r++) {
    const [a, e] = scoreOptions(R, r, first, flag, filled, row);
    rows.set(row, r * NB);
    allowed[r] = a;
    extras[r] = e;
  }
  return { rows, allowed, extras };
}

// ------------------------------------------------------------------------------------------------
// one state's turn (harness/exact/kernels/solver.py stop_one, turn_one, keep_arg_one)

function stopOne(R, V, mask, flag, u, sc) {
  const NB = R.NB, F = R.F, T = R.T;
  const open = ((2 ** NB) - 1) & ~mask;
  const s0 = R.slot[R.umaskOf(mask) * (T + 1) + u];
  const wv = new Float64Array(Math.max(R.nWrows, 1));
  const nxt = new Float64Array(2 * NB);
  let Z = NEG;
  for (let b = 0; b < NB; b++) {
    if (!((open >> b) & 1)) continue;
    const m2 = mask | (1 << b);
    let z;
    if (R.isUpper[b]) {
      const um2 = R.umaskOf(m2);
      const vals = R.boxVals[b];
      for (let v = 0; v < vals.length; v++) {
        const s = vals[v];
        let nf = flag;
        if (b === R.keyBox) nf = s > 0 ? 1 : 0;
        const u2 = Math.min(u + s, T);
        const add = (u < T && u2 >= T) ? s + R.bonus : s;
        wv[R.wrow[b] + v] = add + V[R.base[m2 * F + nf] + R.slot[um2 * (T + 1) + u2]];
      }
      z = wv[R.wrow[b] + vals.indexOf(0)];
    } else {
      for (let zz = 0; zz < 2; zz++) {
        let nf = flag;
        if (b === R.keyBox) nf = zz;
        nxt[2 * b + zz] = V[R.base[m2 * F + nf] + s0];
      }
      z = nxt[2 * b];
    }
    if (z > Z) Z = z;
  }
  const nR = R.dk.R;
  const stop = new Float64Array(nR);
  for (let r = 0; r < nR; r++) {
    const al = sc.allowed[r];
    const free = al === open;
    let acc = free ? Z : NEG;
    for (let b = 0; b < NB; b++) {
      if (!((al >> b) & 1)) continue;
      const s = sc.rows[r * NB + b];
      if (free && s === 0) continue;
      let val;
      if (R.isUpper[b]) val = wv[R.wrow[b] + R.boxVals[b].indexOf(s)];
      else val = s + nxt[2 * b + (s > 0 ? 1 : 0)];
      if (val > acc) acc = val;
    }
    stop[r] = acc + sc.extras[r];
  }
  return stop;
}

function turnOne(dk, stopF, stopL) {
  const nR = dk.R, ns = dk.nSmall, rr = dk.rerolls, K = dk.K;
  const add = dk.add, rem = dk.rem;
  const sixth = 1.0 / 6.0;
  const E = new Float64Array(K);
  const M = new Float64Array(ns);
  const Es = [], Ms = [];
  for (let j = 0; j <= rr; j++) { Es.push(new Float64Array(K)); Ms.push(new Float64Array(ns)); }
  const firstSt = rr === 0 ? stopF : stopL;
  for (let r = 0; r < nR; r++) E[ns + r] = firstSt[r];
  for (let j = 1; j <= rr; j++) {
    const st = j === rr ? stopF : stopL;
    for (let k = ns - 1; k >= 0; k--) {
      const a = k * 6;
      E[k] = (E[add[a]] + E[add[a + 1]] + E[add[a + 2]] + E[add[a + 3]] + E[add[a + 4]] + E[add[a + 5]]) * sixth;
    }
    for (let k = 0; k < ns; k++) {
      let m = E[k];
      for (let f = 0; f < 6; f++) {
        const q = rem[k * 6 + f];
        if (q >= 0 && M[q] > m) m = M[q];
      }
      M[k] = m;
    }
    Es[j].set(E);
    Ms[j].set(M);
    for (let r = 0; r < nR; r++) {
      const kr = ns + r;
      let c = st[r];
      for (let f = 0; f < 6; f++) {
        const q = rem[kr * 6 + f];
        if (q >= 0 && M[q] > c) c = M[q];
      }
      E[kr] = c;
    }
  }
  return { Es, Ms };
}

function keepArgOne(dk, Es, Ms, j, st, r) {
  const rem = dk.rem;
  const kr = dk.nSmall + r;
  let best = st[r];
  let k = -1;
  for (let f = 0; f < 6; f++) {
    const q = rem[kr * 6 + f];
    if (q >= 0 && Ms[j][q] > best) { best = Ms[j][q]; k = q; }
  }
  if (k < 0) return kr;
  while (Es[j][k] !== Ms[j][k]) {
    const m = Ms[j][k];
    for (let f = 0; f < 6; f++) {
      const q = rem[k * 6 + f];
      if (q >= 0 && Ms[j][q] === m) { k = q; break; }
    }
  }
  return k;
}

// ------------------------------------------------------------------------------------------------
// the value table: gunzip, check, decode (harness/exact/compact.py writes it)

async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function sha256hex(bytes) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(d, (x) => x.toString(16).padStart(2, '0')).join('');
}

export function decodeTable(R, raw) {
  const magic = new TextDecoder().decode(raw.subarray(0, 4));
  if (magic !== 'YZT1') throw new Error('not a yatzy-harness level table (bad magic)');
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const hlen = dv.getUint32(4, true);
  const head = JSON.parse(new TextDecoder().decode(raw.subarray(8, 8 + hlen)));
  let p = 8 + hlen;
  const N = head.states;
  if (N !== R.nStates) throw new Error(`the table has ${N} states, rule set ${R.name} has ${R.nStates}`);
  const V = new Float64Array(N);
  if (head.kind === 'f64') {
    for (let i = 0; i < N; i++) V[i] = dv.getFloat64(p + 8 * i, true);
    return { V, head };
  }
  // quantised: q = round(V * 2**shift), delta-coded along each item's upper slots (the first slot
  // against the previous item's first), zigzag, one byte plane after another
  const planes = head.planes;
  const scale = 2 ** -head.shift;
  if (planes > 4) throw new Error(`a table of ${planes} byte planes is not supported (at most 4)`);
  const z = new Uint32Array(N);
  for (let b = 0; b < planes; b++) {
    const plane = raw.subarray(p + b * N, p + (b + 1) * N);
    const sh = 8 * b;
    for (let i = 0; i < N; i++) z[i] |= plane[i] << sh;
  }
  const first = new Uint8Array(N);
  for (const it of R.items) first[it[2]] = 1;
  let prevFirst = 0, prev = 0;
  for (let i = 0; i < N; i++) {
    const zi = z[i];
    const d = (zi >>> 1) ^ -(zi & 1);
    let q;
    if (first[i]) { q = prevFirst + d; prevFirst = q; } else q = prev + d;
    prev = q;
    V[i] = q * scale;
  }
  return { V, head };
}

// ------------------------------------------------------------------------------------------------
// the level

function parseSpec(spec) {
  // solver:temperature=1.2,blunder=0.03 (table= names the export, not a dial)
  const out = { temperature: 0, blunder: 0 };
  const colon = spec.indexOf(':');
  if (colon >= 0) {
    for (const part of spec.slice(colon + 1).split(',')) {
      const [k, v] = part.split('=');
      if (k === 'temperature' || k === 'blunder') out[k] = Number(v);
    }
  }
  return out;
}

class Level {
  constructor(manifest, R, V) {
    this.manifest = manifest;
    this.rules = R;
    this.V = V;
    const dial = manifest.dial || parseSpec(manifest.spec || 'solver');
    this.temperature = dial.temperature || 0;
    this.blunder = dial.blunder || 0;
    this._plans = new Map();
  }

  /** The position's state: filled mask, upper subtotal, flag, points, index in the table. */
  state(pos) {
    const R = this.rules;
    const sheet = pos.sheet;
    if (!Array.isArray(sheet) || sheet.length !== R.NB) throw new Error(`sheet must list ${R.NB} boxes (-1 open)`);
    let filled = 0, upper = 0, points = 0;
    for (let b = 0; b < R.NB; b++) {
      if (sheet[b] >= 0) {
        filled |= 1 << b;
        points += sheet[b];
        if (R.isUpper[b]) upper += sheet[b];
      }
    }
    const flag = R.keyBox >= 0 && sheet[R.keyBox] > 0 ? 1 : 0;
    if (R.bonusValue && upper >= R.threshold) points += R.bonusValue;
    if (Array.isArray(pos.totals) && pos.totals.length > (pos.seat | 0)) points = pos.totals[pos.seat | 0];
    const idx = stateIndex(R, filled, upper, flag === 1);
    if (idx < 0) throw new Error(`no such sheet in ${R.name}: filled=${filled} upper=${upper} flag=${flag}`);
    if (filled === (2 ** R.NB) - 1) throw new Error('every box is filled: the column is over');
    return { filled, upper: Math.min(upper, R.T), flag, points, idx };
  }

  /** One state's turn plan (stop values and stage values), the last few kept. */
  plan(st) {
    let p = this._plans.get(st.idx);
    if (p) return p;
    const R = this.rules;
    const scL = scoreSheet(R, false, st.flag, st.filled);
    const stopL = stopOne(R, this.V, st.filled, st.flag, st.upper, scL);
    const stopF = R.servida ? stopOne(R, this.V, st.filled, st.flag, st.upper, scoreSheet(R, true, st.flag, st.filled)) : stopL;
    const { Es, Ms } = turnOne(R.dk, stopF, stopL);
    p = { stopF, stopL, Es, Ms };
    if (this._plans.size >= 64) this._plans.delete(this._plans.keys().next().value);
    this._plans.set(st.idx, p);
    return p;
  }

  roll(pos) {
    const R = this.rules;
    const t = String(pos.dice).split('').sort().join('');
    const r = R.dk.rollIndex.get(t);
    if (r === undefined) throw new Error(`dice must be ${R.n} faces 1..6, got ${JSON.stringify(pos.dice)}`);
    return r;
  }

  /** The values of the box options without the roll's extra bonus (choose_boxes's vals). */
  _boxes(st, r, first) {
    const R = this.rules, V = this.V, T = R.T, F = R.F;
    const row = new Int16Array(R.NB);
    const [allowed, extra] = scoreOptions(R, r, first, st.flag, st.filled, row);
    const which = [], vals = [];
    const um = R.umaskOf(st.filled);
    for (let b = 0; b < R.NB; b++) {
      if (!((allowed >> b) & 1)) continue;
      const s = row[b];
      let nf = st.flag;
      if (b === R.keyBox) nf = s > 0 ? 1 : 0;
      const m2 = st.filled | (1 << b);
      const b2 = R.base[m2 * F + nf];
      let v;
      if (R.isUpper[b]) {
        const u2 = Math.min(st.upper + s, T);
        const add = (st.upper < T && u2 >= T) ? s + R.bonus : s;
        v = add + V[b2 + R.slot[R.umaskOf(m2) * (T + 1) + u2]];
      } else {
        v = s + V[b2 + R.slot[um * (T + 1) + st.upper]];
      }
      which.push(b);
      vals.push(v);
    }
    return { which, vals, extra };
  }

  _keeps(st, r, j, first) {
    const dk = this.rules.dk;
    const p = this.plan(st);
    const stop = first ? p.stopF : p.stopL;
    const subs = dk.subKeep.subarray(dk.subPtr[r], dk.subPtr[r + 1]);
    const vals = [];
    for (let a = 0; a < subs.length - 1; a++) vals.push(p.Es[j][subs[a]]);
    vals.push(stop[r]);
    return { p, stop, subs, vals };
  }

  _checkKeep(st, j) {
    if (!(j >= 0 && j <= this.rules.rr)) throw new Error(`rolls_left must be 0..${this.rules.rr}, got ${j}`);
  }

  keepText(k) { return this.rules.dk.keeps[k].join(''); }

  /** What a box decision of this position offers: each box's score for the dice (-1 where the rules
   * do not allow it now: forced order, joker) and the extra bonus the roll earns whatever the box. */
  scores(pos) {
    const R = this.rules;
    const st = this.state(pos);
    const row = new Int16Array(R.NB);
    const [allowed, extra] = scoreOptions(R, this.roll(pos), !!pos.first, st.flag, st.filled, row);
    return { scores: Array.from(row, (s, b) => ((allowed >> b) & 1 ? s : -1)), extra };
  }

  /** The level's decision: {keep: "faces"} with rerolls left, else {box: "name"}. */
  decide(pos) {
    const R = this.rules;
    const st = this.state(pos);
    const r = this.roll(pos);
    const j = pos.rolls_left | 0;
    this._checkKeep(st, j);
    const random = this.temperature > 0 || this.blunder > 0;
    const turn = ((pos.column || 1) - 1) * R.NB + ((pos.turn | 0) - 1);
    const step = j > 0 ? (pos.step | 0) - 1 : CHOOSE_STEP;
    if (random && !/^[0-9a-fA-F]{16}$/.test(String(pos.key))) {
      throw new Error(`a randomised level draws from the game key: key must be 16 hex digits, got ${JSON.stringify(pos.key)}`);
    }
    const u = random ? uniforms(BigInt('0x' + pos.key), pos.seat | 0, turn, step, 2) : [0, 0];
    if (j > 0) {
      const dk = R.dk;
      const lo = dk.subPtr[r];
      const n = dk.subPtr[r + 1] - lo;
      if (u[0] < this.blunder) return { keep: this.keepText(dk.subKeep[lo + Math.min(Math.floor(u[1] * n), n - 1)]) };
      const { p, stop, subs, vals } = this._keeps(st, r, j, j === R.rr);
      if (this.temperature > 0) return { keep: this.keepText(subs[softmaxPick(vals, this.temperature, u[1])]) };
      return { keep: this.keepText(keepArgOne(dk, p.Es, p.Ms, j, stop, r)) };
    }
    const { which, vals } = this._boxes(st, r, !!pos.first);
    const n = which.length;
    if (this.blunder > 0 && u[0] < this.blunder) return { box: R.boxNames[which[Math.min(Math.floor(u[1] * n), n - 1)]] };
    if (this.temperature > 0) return { box: R.boxNames[which[softmaxPick(vals, this.temperature, u[1])]] };
    let best = vals[0], arg = 0;
    for (let a = 1; a < n; a++) if (vals[a] > best) { best = vals[a]; arg = a; }
    return { box: R.boxNames[which[arg]] };
  }

  /** Every option with its value (points on the sheet + expected rest of the game under optimal
   * play, from this table), regret and best, in `advise`'s order: the T=0 choice first among ties. */
  values(pos) {
    const R = this.rules;
    const st = this.state(pos);
    const r = this.roll(pos);
    const j = pos.rolls_left | 0;
    this._checkKeep(st, j);
    if (j > 0) {
      const first = j === R.rr;
      const { p, stop, subs, vals } = this._keeps(st, r, j, first);
      const choice = keepArgOne(R.dk, p.Es, p.Ms, j, stop, r);
      let top = vals[0];
      for (const v of vals) if (v > top) top = v;
      const opts = Array.from(subs, (k, a) => {
        const faces = R.dk.keeps[k].slice().reverse();
        return { keep: faces.join(''), faces, index: k, stop: a === subs.length - 1, future: vals[a],
                 value: st.points + vals[a], regret: top - vals[a], best: top - vals[a] <= TIE };
      });
      opts.sort((a, b) => a.regret - b.regret || (a.index !== choice) - (b.index !== choice)
        || b.faces.length - a.faces.length || cmpDesc(a.faces, b.faces));
      return { decision: 'keep', options: opts.map(({ faces, ...o }) => o) };
    }
    const { which, vals, extra } = this._boxes(st, r, !!pos.first);
    let choice = 0;
    for (let a = 1; a < vals.length; a++) if (vals[a] > vals[choice]) choice = a;
    const fut = vals.map((v) => v + extra);
    let top = fut[0];
    for (const v of fut) if (v > top) top = v;
    const opts = which.map((b, a) => ({ box: R.boxNames[b], index: b, future: fut[a], value: st.points + fut[a],
                                        regret: top - fut[a], best: top - fut[a] <= TIE, chosen: a === choice }));
    opts.sort((a, b) => a.regret - b.regret || (!a.chosen) - (!b.chosen) || a.index - b.index);
    return { decision: 'box', options: opts.map(({ chosen, ...o }) => o) };
  }
}

function cmpDesc(a, b) {
  // advise sorts keeps of equal length by [-x for x in keep]: higher faces first
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return b[i] - a[i];
  return 0;
}

/**
 * Load a level once: manifest (the export's manifest.json, parsed) and table (the .bin.gz bytes as
 * fetched, a Uint8Array or ArrayBuffer). Checks the table's sha256 against the manifest and that
 * both are this module's harness version and the manifest's rule set; then decodes the table.
 */
export async function load(manifest, table) {
  if (!manifest || typeof manifest !== 'object') throw new Error('load(manifest, table): manifest must be the parsed manifest.json');
  if (manifest.format !== 'yatzy-level/1') throw new Error(`not a yatzy-harness level manifest (format ${JSON.stringify(manifest.format)})`);
  if (manifest.harness !== HARNESS_VERSION) {
    throw new Error(`the level was exported by yatzy-harness ${manifest.harness}; this module is ${HARNESS_VERSION}: export again`);
  }
  const bytes = table instanceof Uint8Array ? table : new Uint8Array(table);
  const sha = await sha256hex(bytes);
  if (sha !== manifest.table.sha256) {
    throw new Error(`table sha256 ${sha.slice(0, 16)}... is not the manifest's ${String(manifest.table.sha256).slice(0, 16)}...: another level's table, or damaged`);
  }
  const R = compileRules(manifest.rules);
  const { V, head } = decodeTable(R, await gunzip(bytes));
  if (head.digest !== manifest.digest) {
    throw new Error(`the table is of rule set digest ${String(head.digest).slice(0, 12)}, the manifest's rule set ${manifest.rules.name} is ${String(manifest.digest).slice(0, 12)}`);
  }
  if (head.harness !== HARNESS_VERSION) throw new Error(`the table was written by yatzy-harness ${head.harness}; this module is ${HARNESS_VERSION}`);
  return new Level(manifest, R, V);
}

/** Node only: load an export directory (manifest.json and its table) from disk. */
export async function loadDir(dir) {
  const fs = await import('node:fs/promises');
  const path = await import('node:path');
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8'));
  const table = await fs.readFile(path.join(dir, manifest.table.file));
  return load(manifest, new Uint8Array(table.buffer, table.byteOffset, table.byteLength));
}
