// tools/badbroker.js - an MQTT broker that answers every CONNECT with an
// accepted CONNACK and then one bad packet, to test that a client reports
// a broken stream and goes on. Listens on 127.0.0.1 only, on a free port
// written to PORTFILE; counts connections in PORTFILE.n; exits by itself
// after SECONDS (default 60).
// usage: node tools/badbroker.js MODE PORTFILE [SECONDS]
//   truncated  a PUBLISH whose remaining length says 100 bytes, 6 sent,
//              then the connection closed
//   biglen     a remaining length in 5 bytes (the most is 4)
//   wrongtype  a SUBSCRIBE, which only a client sends
//   reserved   packet type 0, reserved
//   early      a PUBLISH before the CONNACK
"use strict";
const net = require("net");
const fs = require("fs");
const [mode, portFile, secs] = process.argv.slice(2);
const modes = ["truncated", "biglen", "wrongtype", "reserved", "early"];
if (!modes.includes(mode) || !portFile) {
  console.error("usage: badbroker.js " + modes.join("|") + " PORTFILE [SECONDS]");
  process.exit(2);
}
let conns = 0;

// CONNACK as the client's protocol level wants it: 5 has properties.
function connack(level) {
  return Buffer.from(level === 5 ? [0x20, 3, 0, 0, 0] : [0x20, 2, 0, 0]);
}

function bad(c, level) {
  switch (mode) {
  case "truncated":
    c.write(connack(level));
    c.end(Buffer.from([0x30, 100, 0, 3, 0x61, 0x2f, 0x62, 0x78]));
    break;
  case "biglen":
    c.write(connack(level));
    c.write(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0]));
    break;
  case "wrongtype":
    c.write(connack(level));
    c.write(Buffer.from(level === 5 ? [0x82, 7, 0, 1, 0, 0, 1, 0x61, 1] :
        [0x82, 6, 0, 1, 0, 1, 0x61, 1]));
    break;
  case "reserved":
    c.write(connack(level));
    c.write(Buffer.from([0x00, 0]));
    break;
  case "early":
    c.write(Buffer.from(level === 5 ? [0x30, 6, 0, 3, 0x61, 0x2f, 0x62, 0] :
        [0x30, 5, 0, 3, 0x61, 0x2f, 0x62]));
    break;
  }
}

// The CONNECT's protocol level: the byte after the protocol name "MQTT",
// which follows the fixed header (type, 1 to 4 length bytes, 0 0x04).
function level(b) {
  let i = 1;
  while (i < b.length && (b[i] & 0x80))
    i++;
  i += 1 + 2 + 4;
  return i < b.length ? b[i] : 0;
}

const srv = net.createServer((c) => {
  let got = Buffer.alloc(0), done = false;
  fs.writeFileSync(portFile + ".n", String(++conns));
  c.on("error", () => {});
  c.on("data", (d) => {
    got = Buffer.concat([got, d]);
    if (!done && got.length >= 10 && (got[0] >> 4) === 1) {
      done = true;
      bad(c, level(got));
    }
  });
});
srv.listen(0, "127.0.0.1", () => {
  fs.writeFileSync(portFile + ".tmp", String(srv.address().port));
  fs.renameSync(portFile + ".tmp", portFile);
});
setTimeout(() => process.exit(0), 1000 * (Number(secs) || 60));
