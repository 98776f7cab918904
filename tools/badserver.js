// tools/badserver.js - an HTTP server that answers every request badly, to
// test that a client's deadline bounds the whole request. Listens on
// 127.0.0.1 only, on a free port written to PORTFILE, and exits by itself
// after SECONDS (default 30).
// usage: node tools/badserver.js MODE PORTFILE [SECONDS]
//   drip      200 text/event-stream, then ": keepalive" every 200 ms forever
//   slowhead  a head sent one byte per 100 ms, never ending
//   errbody   500 with a chunked body that never ends, as fast as it goes
//   silent    reads the request and never answers
//   busy      503 with Retry-After: 5 and a short body
"use strict";
const net = require("net");
const fs = require("fs");
const [mode, portFile, secs] = process.argv.slice(2);
const modes = ["drip", "slowhead", "errbody", "silent", "busy"];
if (!modes.includes(mode) || !portFile) {
  console.error("usage: badserver.js " + modes.join("|") + " PORTFILE [SECONDS]");
  process.exit(2);
}

// Call f every ms until the connection goes.
function every(c, ms, f) {
  const t = setInterval(() => { if (!c.destroyed) f(); }, ms);
  c.on("close", () => clearInterval(t));
}

function answer(c) {
  switch (mode) {
  case "drip":
    c.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" +
        "Cache-Control: no-cache\r\n\r\n");
    every(c, 200, () => c.write(": keepalive\n\n"));
    break;
  case "slowhead": {
    let head = "HTTP/1.1 200 OK\r\n", i = 0, n = 0;
    every(c, 100, () => {
      if (i === head.length) {
        head = "X-Slow-" + n++ + ": yes\r\n";
        i = 0;
      }
      c.write(head[i++]);
    });
    break;
  }
  case "errbody": {
    const chunk = "4000\r\n" + "e".repeat(0x4000) + "\r\n";
    const pump = () => { while (!c.destroyed && c.write(chunk)); };
    c.write("HTTP/1.1 500 Internal Server Error\r\n" +
        "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n");
    c.on("drain", pump);
    pump();
    break;
  }
  case "silent":
    break;
  case "busy": {
    const body = '{"error":{"message":"busy, come back later"}}';
    c.write("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\n" +
        "Content-Type: application/json\r\nContent-Length: " +
        body.length + "\r\n\r\n" + body);
    break;
  }
  }
}

const server = net.createServer((c) => {
  c.setNoDelay(true);
  c.on("error", () => c.destroy());
  c.once("data", () => answer(c));
});
server.listen(0, "127.0.0.1", () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
setTimeout(() => process.exit(0), (Number(secs) || 30) * 1000);
