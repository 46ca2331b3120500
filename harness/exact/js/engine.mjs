#!/usr/bin/env node
// An exported level as a yatzy-engine/1 engine (JSON lines on stdin/stdout, docs/engines.md), for
// Node 20 with no packages: `node engine.mjs [EXPORT_DIR]` (default: this file's folder). It answers
// every position with level.mjs's decide(), so a run with `engine:cmd="node engine.mjs"` plays the
// games the harness's in-process bot plays from the same table (the closed loop of
// docs/ship-a-level.md).
import { loadDir } from './level.mjs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = process.argv[2] || path.dirname(fileURLToPath(import.meta.url));
const levelP = loadDir(dir);

async function hello() {
  const level = await levelP;
  const m = level.manifest;
  return { type: 'hello', protocol: 'yatzy-engine/1', name: m.level || m.spec, version: m.harness,
           author: 'yatzy-harness export', rules: [m.rules.name], options: [] };
}

function column(msg, key, i) { return Array.isArray(msg[key]) ? msg[key][i] : undefined; }

async function handle(msg) {
  const t = msg.type;
  if (t === 'hello') return hello();
  const level = await levelP;
  if (t === 'newgame') {
    const want = level.manifest.rules.name;
    if (!msg.rules || msg.rules.name !== want) throw new Error(`this level plays ${want}, not ${msg.rules && msg.rules.name}`);
    return { type: 'ready', id: msg.id };
  }
  if (t === 'ping') return { type: 'pong', id: msg.id };
  if (t === 'decide') {
    const kind = msg.kind;
    const n = msg.game.length;
    const names = level.rules.boxNames;
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      const pos = {
        dice: msg.dice[i], sheet: msg.sheet[i], rolls_left: kind === 'box' ? 0 : msg.rolls_left[i],
        key: msg.key[i], seat: msg.seat[i], column: msg.column[i], turn: msg.turn[i], step: msg.step[i],
        first: column(msg, 'first', i),
      };
      const d = level.decide(pos);
      out[i] = kind === 'box' ? names.indexOf(d.box) : d.keep;
    }
    return { type: 'answer', id: msg.id, game: msg.game, [kind]: out };
  }
  throw new Error(`unknown message type ${JSON.stringify(t)}`);
}

let done = false;
let chain = Promise.resolve();
function onLine(line) {
  if (done || !line.trim()) return;
  let msg;
  try { msg = JSON.parse(line); } catch (err) {
    process.stdout.write(JSON.stringify({ type: 'error', id: null, message: String(err.message) }) + '\n');
    return;
  }
  if (msg && msg.type === 'quit') { done = true; chain.then(() => process.stdin.destroy()); return; }
  // answered in order, each once the table has loaded
  chain = chain.then(() => handle(msg)).then(
    (reply) => process.stdout.write(JSON.stringify(reply) + '\n'),
    (err) => process.stdout.write(JSON.stringify({ type: 'error', id: msg && msg.id !== undefined ? msg.id : null,
                                                    message: String(err && err.message ? err.message : err).slice(0, 500) }) + '\n'));
}

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
