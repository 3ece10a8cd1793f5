// A bayestune external-protocol client in Node.js: parameters x,y; objective value = (x - 3)^2 + y.
// MODE (argv[2]) makes it misbehave on purpose, from its second request on unless noted:
//   good            answer correctly (x = 13 is infeasible, x = 7 gives NaN)
//   reverse         answer the rows in reverse order (parameters echoed, so they still match)
//   no-params       answer without echoing the parameter columns (rows in request order)
//   unknown-header  add a column nobody declared
//   wrong-columns   one row has an extra value
//   non-numeric     an objective value is not a number
//   missing-row     leave out the last row, then wait
//   exit            exit with code 3 instead of answering
//   hang            never answer
// argv[3], if given, is a file that gets one line per process start (to count restarts).
"use strict";
const fs = require("fs");
const readline = require("readline");

const mode = process.argv[2] || "good";
if (process.argv[3]) fs.appendFileSync(process.argv[3], "started\n");
const rl = readline.createInterface({ input: process.stdin, terminal: false });
const out = (s) => process.stdout.write(s + "\n");

let state = "idle", expected = 0, header = null, rows = [], requests = 0;

function answer() {
  requests += 1;
  const bad = requests >= 2 ? mode : "good";
  if (bad === "exit") { process.stderr.write("giving up on purpose\n"); process.exit(3); }
  if (bad === "hang") return;
  const names = header.split(",");
  const xi = names.indexOf("x"), yi = names.indexOf("y");
  const lines = rows.map((r) => {
    const cells = r.split(",");
    const x = Number(cells[xi]), y = Number(cells[yi]);
    let value = (x - 3) ** 2 + y, valid = "True";
    if (x === 13) { value = ""; valid = "False"; }
    if (x === 7) value = "nan";
    if (bad === "non-numeric") value = "fast";
    const params = bad === "no-params" ? [] : [r];
    return [...params, value, valid].join(",");
  });
  let head = bad === "no-params" ? "value,Valid" : header + ",value,Valid";
  if (bad === "unknown-header") head += ",bogus";
  if (bad === "wrong-columns") lines[0] += ",42";
  if (bad === "reverse") lines.reverse();
  if (bad === "missing-row") lines.pop();
  out(head);
  lines.forEach((l) => out(l));
}

rl.on("line", (line) => {
  if (state === "idle") {
    if (line.startsWith("End")) process.exit(0);
    const m = /^Request (\d+)$/.exec(line);
    if (!m) { process.stderr.write("unexpected line: " + line + "\n"); return; }
    expected = Number(m[1]); rows = []; state = "header";
  } else if (state === "header") {
    header = line; state = "rows";
  } else {
    rows.push(line);
    if (rows.length === expected) { state = "idle"; answer(); }
  }
});
rl.on("close", () => process.exit(0));
