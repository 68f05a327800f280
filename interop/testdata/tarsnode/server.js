// server.js serves EchoTars (echotars.js) with TarsNode's server on a loopback port the system
// picks: node server.js <servant> [tcp|udp]. It prints "listening <port>" once the port is
// open, and exits when its standard input closes (the test that started it ended).
"use strict";

var TarsServer = require("@tars/rpc").server;
var EchoTars = require("./echotars.js");

var servant = process.argv[2];
var proto = process.argv[3] || "tcp";

var option = new TarsServer.BindAdapterOption();
option.endpoint = proto + " -h 127.0.0.1 -p 0 -t 60000";
option.name = servant + "Adapter";
option.servant = servant;
option.handleImp = EchoTars.Imp;

var svr = TarsServer.createServer();
svr.start(option);

// TarsNode does not say which port it was given: ask the adapter's listener (a net.Server, or
// a dgram socket for udp) once it is bound.
var tries = 0;
(function announce() {
    var adapter = svr._adapters[0];
    var l = adapter && adapter._netthread && adapter._netthread._listener;
    var addr = null;
    try { addr = l && l.address(); } catch (e) { addr = null; } // a dgram socket not yet bound throws
    if (addr && addr.port) {
        process.stdout.write("listening " + addr.port + "\n");
        return;
    }
    if (++tries > 500) {
        process.stderr.write("the adapter did not listen within 5 s\n");
        process.exit(1);
    }
    setTimeout(announce, 10);
})();

process.stdin.resume();
process.stdin.on("end", function () { process.exit(0); });
process.stdin.on("error", function () { process.exit(0); });
