// tools/httpproxy.js - a minimal HTTP proxy for tests: CONNECT tunnels and
// absolute-form requests, to 127.0.0.1 only. Logs one line per request.
// usage: node tools/httpproxy.js PORTFILE LOGFILE
"use strict";
const net = require("net");
const fs = require("fs");
const [portFile, logFile] = process.argv.slice(2);
const log = (s) => fs.appendFileSync(logFile, s + "\n");

const server = net.createServer((c) => {
  let head = Buffer.alloc(0);
  const onData = (d) => {
    head = Buffer.concat([head, d]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    c.removeListener("data", onData);
    const text = head.slice(0, end).toString("latin1");
    const rest = head.slice(end + 4);
    const [method, target] = text.split("\r\n")[0].split(" ");
    log(method + " " + target);
    let host, port;
    if (method === "CONNECT") {
      [host, port] = target.split(":");
    } else {
      const u = new URL(target);
      host = u.hostname;
      port = u.port || 80;
    }
    if (host !== "localhost" && host !== "127.0.0.1") {
      c.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    const up = net.connect(Number(port), "127.0.0.1", () => {
      if (method === "CONNECT") {
        c.write("HTTP/1.1 200 Connection established\r\n\r\n");
      } else {
        // origin form upstream
        const u = new URL(target);
        const lines = text.split("\r\n");
        lines[0] = method + " " + u.pathname + u.search + " HTTP/1.1";
        up.write(lines.join("\r\n") + "\r\n\r\n");
      }
      if (rest.length) up.write(rest);
      c.pipe(up);
      up.pipe(c);
    });
    up.on("error", () => c.destroy());
    c.on("error", () => up.destroy());
  };
  c.on("data", onData);
});
server.listen(0, "127.0.0.1", () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
