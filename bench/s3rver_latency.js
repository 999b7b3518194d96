// s3rver (an S3-compatible server on npm, objects kept as files, SigV4 signatures checked) behind a
// latency, for bench/bench_remote.py part 5 (`--server s3rver`): every request waits LATENCY_MS
// before s3rver sees it (concurrent requests each their own wait, as on object storage), and
// /_stats counts the requests by method (as tests/remote_servers.py's moto wrapper does), with
// the server's CPU seconds. Unlike moto under werkzeug, it keeps connections alive, as S3 does.
//
//   node bench/s3rver_latency.js DIRECTORY PORT LATENCY_MS   (S3RVER_MODULE: where s3rver is)
'use strict';
const http = require('http');
const S3rver = require(process.env.S3RVER_MODULE || 's3rver');

const [directory, port, latencyMs] = process.argv.slice(2);
const app = new S3rver({ directory, silent: true });
const handler = app.callback();
const counts = { in_flight_max: 0 };
let now = 0;

http
  .createServer((req, res) => {
    if (req.url === '/_stats') {
      const cpu = process.cpuUsage();
      const body = JSON.stringify({ ...counts, cpu_seconds: (cpu.user + cpu.system) / 1e6 });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const method = req.method + (req.headers.range ? ' range' : '');
    counts[method] = (counts[method] || 0) + 1;
    now += 1;
    counts.in_flight_max = Math.max(counts.in_flight_max, now);
    res.on('close', () => {
      now -= 1;
    });
    setTimeout(() => handler(req, res), Number(latencyMs));
  })
  .listen(Number(port), '127.0.0.1');
