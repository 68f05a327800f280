// client.js calls EchoTars (echotars.js) with TarsNode's client: node client.js <proxy> <steps>,
// where proxy is a TARS proxy string ("Obj@tcp -h 127.0.0.1 -p P -t 60000") and steps a JSON
// array run one after the other:
//
//   {"op": "echo", "size": N}             echo of N bytes (a pattern of N), checked here
//   {"op": "sum", "nums": [..], "label": "x"}
//   {"op": "sleep", "ms": N}
//   {"op": "raw", "func": "f", "hex": H, "oneway": B}
//                                         any function with the body H (hex); one-way if B
//   {"op": "parallel", "n": N, "size": S} N echoes of S bytes at once
//   {"op": "timeout", "ms": N}            the proxy's timeout for the next steps
//   {"op": "tup", "version": 2|3, "timeout": ms}
//                                         echo as a TUP request (UniAttribute "req") of that
//                                         version, from the TUP-mode proxy of that version (one
//                                         per version, made on first use, its connection kept),
//                                         with timeout (10 s if 0)
//   {"op": "wait"}                        reads a line from standard input before going on
//
// It prints a line of JSON per step as the step ends (before a wait reads): {op, ret, ok, size,
// total, echoed, hex, code, message, n, failed}. A failed call gives code and message
// (TarsNode's error: a negative TarsError code of the client, or the server's iRet and
// sResultDesc).
"use strict";

var Tars = require("@tars/rpc");
var TarsStream = require("@tars/stream");
var EchoTars = require("./echotars.js");

var prx = Tars.client.stringToProxy(EchoTars.Proxy, process.argv[2]);
prx.setTimeout(10000);
var steps = JSON.parse(process.argv[3]);

function payload(n) {
    var b = Buffer.alloc(n);
    for (var i = 0; i < n; i++) {
        b[i] = (i * 31 + n) & 0xff;
    }
    var bb = new TarsStream.BinBuffer();
    bb.writeNodeBuffer(b);
    return bb;
}

function echoed(n, rsp) {
    var want = payload(n).toNodeBuffer();
    var got = rsp.toNodeBuffer();
    return got.length === want.length && got.equals(want);
}

function failed(e) {
    return { code: e && e.code, message: String(e && e.message) };
}

function withOp(op, r) {
    r.op = op;
    return r;
}

var run = {
    echo: function (s) {
        return prx.echo(payload(s.size)).then(function (r) {
            return { ret: r.ret, size: r.rsp.length, ok: echoed(s.size, r.rsp) };
        }, failed);
    },
    sum: function (s) {
        return prx.sum(s.nums, s.label).then(function (r) {
            return { ret: r.ret, total: r.total, echoed: r.echoed };
        }, failed);
    },
    sleep: function (s) {
        return prx.sleep(s.ms).then(function (r) { return { ret: r.ret }; }, failed);
    },
    raw: function (s) {
        var bb = new TarsStream.BinBuffer();
        bb.writeNodeBuffer(Buffer.from(s.hex, "hex"));
        var property = s.oneway ? { packetType: 1 } : {};
        return prx._worker.tars_invoke(s.func, bb, property).then(function (data) {
            return { ret: 0, hex: data.response.sBuffer.toNodeBuffer().toString("hex") };
        }, function (data) {
            return failed((data && data.error) || {});
        });
    },
    parallel: function (s) {
        var all = [];
        for (var i = 0; i < s.n; i++) {
            all.push(prx.echo(payload(s.size)).then(function (r) {
                return r.ret === 0 && echoed(s.size, r.rsp);
            }, function () { return false; }));
        }
        return Promise.all(all).then(function (oks) {
            return { n: oks.length, failed: oks.filter(function (ok) { return !ok; }).length };
        });
    },
    timeout: function (s) {
        prx.setTimeout(s.ms);
        return Promise.resolve({});
    },
    tup: function (s) {
        var tupPrx = tupProxies[s.version];
        if (!tupPrx) {
            tupPrx = Tars.Communicator.New().stringToProxy(EchoTars.Proxy, process.argv[2]);
            tupPrx._worker.version = s.version; // read replies as TUP packets
            tupProxies[s.version] = tupPrx;
        }
        tupPrx.setTimeout(s.timeout || 10000);
        var attr = new TarsStream.UniAttribute();
        attr.tupVersion = s.version;
        attr.writeBytes("req", payload(8));
        return tupPrx._worker.tup_invoke("echo", attr).then(function (data) {
            return { ret: 0 };
        }, function (data) {
            return failed((data && data.error) || {});
        });
    }
};

var tupProxies = {};

// lines hands out the lines of standard input, to the waits in turn.
var lines = (function () {
    var buf = "", waiting = [], ready = [];
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", function (d) {
        buf += d;
        var i;
        while ((i = buf.indexOf("\n")) >= 0) {
            buf = buf.slice(i + 1);
            if (waiting.length > 0) {
                waiting.shift()();
            } else {
                ready.push(true);
            }
        }
    });
    return function () {
        return new Promise(function (resolve) {
            if (ready.length > 0) {
                ready.shift();
                resolve();
            } else {
                waiting.push(resolve);
            }
        });
    };
})();
process.stdin.pause();

function print(r) {
    return new Promise(function (resolve) {
        process.stdout.write(JSON.stringify(r) + "\n", resolve);
    });
}

steps.reduce(function (p, s) {
    return p.then(function () {
        if (s.op === "wait") {
            return print({ op: "wait" }).then(function () {
                process.stdin.resume();
                return lines();
            });
        }
        var f = run[s.op];
        if (!f) {
            return print({ op: s.op, code: "bad step", message: JSON.stringify(s) });
        }
        return Promise.resolve(f(s)).then(function (r) { return print(withOp(s.op, r)); });
    });
}, Promise.resolve()).then(function () {
    process.exit(0);
}, function (e) {
    process.stderr.write("client.js: " + (e && e.stack || e) + "\n");
    process.exit(1);
});
