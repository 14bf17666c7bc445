// The verdict on one harness run, for run.sh.
// usage: node verdict.mjs <result-dir> <harness-log> <harness-exit-code>
// Prints one line: empty when the run passed, else why it failed. A run fails when the
// harness failed it (a FAILURE or WARNING check, a client timeout, a client that exited
// non-zero where that is not expected) and also when it verified nothing: every scenario
// check SKIPPED or INFO, or no checks at all, which the harness itself would pass.
import fs from 'node:fs';
import path from 'node:path';

const [dir, logFile, rcText] = process.argv.slice(2);
const rc = Number(rcText);

const files = (root, name) =>
  fs.existsSync(root)
    ? fs.readdirSync(root, { recursive: true }).filter((f) => path.basename(f) === name).map((f) => path.join(root, f))
    : [];
const oneLine = (text, max = 160) => String(text ?? '').replace(/\s+/g, ' ').trim().slice(0, max);
const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').replace(/\x1b\[[0-9;]*m/g, '') : '';

const checkFiles = files(dir, 'checks.json');
const checks = checkFiles.flatMap((f) => {
  try {
    return JSON.parse(fs.readFileSync(f, 'utf8'));
  } catch {
    return [];
  }
});
const reasons = [];
for (const [status, label] of [['FAILURE', 'failed checks'], ['WARNING', 'warnings']]) {
  const hit = checks.filter((c) => c.status === status);
  if (!hit.length) continue;
  const ids = [...new Set(hit.map((c) => c.id))].join(', ');
  reasons.push(`${label}: ${ids} (${oneLine(hit[0].errorMessage || hit[0].description)})`);
}
if (/CLIENT TIMED OUT/.test(log)) reasons.push('client timed out');
const exited = log.match(/CLIENT EXITED WITH ERROR \(code (-?\d+)\)/);
if (exited) {
  // Name the client's error: the last stderr line that looks like one.
  const lines = files(dir, 'stderr.txt').flatMap((f) => fs.readFileSync(f, 'utf8').split('\n')).map((l) => l.trim());
  const err = lines.filter((l) => /(Error|Exception|failed)\b/.test(l)).pop() ?? lines.filter(Boolean).pop() ?? '';
  reasons.push(`client exited with code ${exited[1]}` + (err ? ` [${oneLine(err)}]` : ''));
}
const skipped = log.match(/^SKIPPED: (.*)$/m);
if (skipped) reasons.push(`not run: ${oneLine(skipped[1], 200)}`);
if (!checkFiles.length && !skipped) {
  reasons.push(`the harness wrote no checks (exit ${rc}): ${oneLine(log.trim().split('\n').pop() || 'no output', 200)}`);
}
const verified = checks.some((c) => c.status === 'SUCCESS' && !String(c.id).startsWith('wire-schema-'));
if (checkFiles.length && !verified && !reasons.length) {
  const why = checks.find((c) => c.status === 'SKIPPED' && c.errorMessage);
  reasons.push('nothing verified: ' + (why ? `every check was skipped (${oneLine(why.errorMessage)})`
    : checks.length ? 'no scenario check passed' : 'no check recorded (did the client reach the server?)'));
}
if (rc !== 0 && !reasons.length) reasons.push(`harness exit code ${rc}`);
console.log(reasons.join('; '));
