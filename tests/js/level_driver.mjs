// Test driver of an exported level (tests/test_export.py): `node level_driver.mjs EXPORT_DIR`, then
// one JSON request a line on stdin, one JSON reply a line on stdout:
//   {"op": "plans", "states": [[filled, upper, flag], ...]} -> {"plans": [[stop_f, stop_l, Es, Ms], ...]}
//     each array the float64s' big-endian bytes as hex, Es and Ms (rerolls + 1) rows one after another;
//   {"op": "values", "positions": [...]} -> {"values": [level.values(p) with each future as hex]};
//   {"op": "decide", "positions": [...]} -> {"decide": [level.decide(p)]};
//   {"op": "exp", "x": [hex, ...]} -> {"exp": hex}; {"op": "uniforms", "keys": [hex16...], "seat", "turn",
//     "step"} -> {"uniforms": [hex of the two uniforms of each key]}; {"op": "dice", "seed", "games",
//     "seat", "turn", "roll", "n"} -> {"dice": [[game key, faces], ...]}.
import { drawFaces, expIeee, gameKey, keyText, loadDir, stateIndex, uniforms } from '../../harness/exact/js/level.mjs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.argv[2];
// the module exported into the directory when it has one (what a page loads), else the source's
const mod = await import(pathToFileURL(path.join(dir, 'level.mjs')).href).catch(() => null);
const level = await (mod ? mod.loadDir(dir) : loadDir(dir));

function hex(arrays) {
  const n = arrays.reduce((a, x) => a + x.length, 0);
  const dv = new DataView(new ArrayBuffer(8 * n));
  let i = 0;
  for (const a of arrays) for (const v of a) dv.setFloat64(8 * i++, v);
  return Buffer.from(dv.buffer).toString('hex');
}

function handle(req) {
  if (req.op === 'plans') {
    const R = level.rules;
    return { plans: req.states.map(([filled, upper, flag]) => {
      const idx = stateIndex(R, filled, upper, flag);
      const p = level.plan({ filled, upper: Math.min(upper, R.T), flag, idx });
      return [hex([p.stopF]), hex([p.stopL]), hex(p.Es), hex(p.Ms)];
    }) };
  }
  if (req.op === 'values') {
    return { values: req.positions.map((p) => {
      const v = level.values(p);
      return { decision: v.decision, options: v.options.map((o) => ({ ...o, future: hex([[o.future]]), value: hex([[o.value]]) })) };
    }) };
  }
  if (req.op === 'exp') {
    return { exp: hex([req.x.map((h) => Buffer.from(h, 'hex').readDoubleBE(0)).map(expIeee)]) };
  }
  if (req.op === 'uniforms') {
    return { uniforms: req.keys.map((k) => hex([uniforms(BigInt('0x' + k), req.seat, req.turn, req.step, 2)])) };
  }
  if (req.op === 'dice') {
    return { dice: req.games.map((g) => {
      const key = gameKey(BigInt(req.seed), BigInt(g));
      return [keyText(key), drawFaces(key, req.seat, req.turn, req.roll, req.n)];
    }) };
  }
  if (req.op === 'decide') return { decide: req.positions.map((p) => level.decide(p)) };
  throw new Error(`unknown op ${req.op}`);
}

let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    let reply;
    try { reply = handle(JSON.parse(line)); } catch (err) { reply = { error: String(err && err.stack ? err.stack : err) }; }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
});
