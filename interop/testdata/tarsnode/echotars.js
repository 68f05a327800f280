// EchoTars for TarsNode, written by hand in the shape tars2node gives a servant and a proxy
// (there is no tars2node on npm): the interface of the interop tests (internal/tarsidl),
//
//   module Interop {
//       interface EchoTars {
//           int echo(vector<byte> req, out vector<byte> rsp);
//           int sum(vector<int> nums, string label, out long total, out string echoed);
//           int sleep(int ms);
//       };
//   };
//
// and two functions of the JS servant only, for error replies: fail(int code, string desc)
// answers with sendErrorResponse(code, desc), as a TarsNode servant that refuses a call does;
// throw throws an error whose code is a string.
"use strict";

var TarsStream = require("@tars/stream");
var TarsError = require("@tars/rpc").error;

var EchoTars = {};
module.exports = EchoTars;

// ---- the servant ---------------------------------------------------------------------------

EchoTars.Imp = function () {
    this._name = undefined;
    this._worker = undefined;
};

EchoTars.Imp.prototype.initialize = function () {};

function reply(current, write) {
    var os = new TarsStream.TarsOutputStream();
    write(os);
    current.doResponse(os.getBinBuffer());
}

// onDispatch decodes the parameters the way tars2node's dispatch does (each with its tag and
// "require"), calls the function and encodes the return value at tag 0 and the out
// parameters at theirs.
EchoTars.Imp.prototype.onDispatch = function (current, func, buf) {
    var is;
    switch (func) {
    case "tars_ping":
        reply(current, function (os) { os.writeInt32(0, 0); });
        return TarsError.SUCCESS;
    case "echo": {
        is = new TarsStream.TarsInputStream(buf);
        var req = is.readBytes(1, true, TarsStream.BinBuffer);
        reply(current, function (os) {
            os.writeInt32(0, 0);
            os.writeBytes(2, req);
        });
        return TarsError.SUCCESS;
    }
    case "sum": {
        is = new TarsStream.TarsInputStream(buf);
        var nums = is.readList(1, true, TarsStream.List(TarsStream.Int32));
        var label = is.readString(2, true);
        var total = 0;
        nums.forEach(function (n) { total += n; });
        reply(current, function (os) {
            os.writeInt32(0, nums.length);
            os.writeInt64(3, total);
            os.writeString(4, label);
        });
        return TarsError.SUCCESS;
    }
    case "sleep": {
        is = new TarsStream.TarsInputStream(buf);
        var ms = is.readInt32(1, true);
        setTimeout(function () {
            reply(current, function (os) { os.writeInt32(0, 0); });
        }, ms);
        return TarsError.SUCCESS;
    }
    case "throw": {
        // A servant that throws an error whose code is not a number, as assert.fail (what
        // tars2node writes into a function not implemented yet) and Node's system errors do.
        var e = new Error("not implemented");
        e.code = "ERR_ASSERTION";
        throw e;
    }
    case "fail": {
        is = new TarsStream.TarsInputStream(buf);
        var code = is.readInt32(1, true);
        var desc = is.readString(2, true);
        current.sendErrorResponse(code, desc);
        return TarsError.SUCCESS;
    }
    }
    return TarsError.SERVER.FUNC_NOT_FOUND;
};

// ---- the proxy -----------------------------------------------------------------------------

EchoTars.Proxy = function () {
    this._name = undefined;
    this._worker = undefined;
};

EchoTars.Proxy.prototype.setTimeout = function (ms) { this._worker.timeout = ms; };

// invoke sends func with the encoded parameters and decodes the reply with decode; a failure
// is thrown as {code, message}, from the framework (a negative TarsError code, or the
// server's iRet) or from decode (TarsError.CLIENT.DECODE_ERROR).
EchoTars.Proxy.prototype._invoke = function (func, encode, decode) {
    var os = new TarsStream.TarsOutputStream();
    encode(os);
    return this._worker.tars_invoke(func, os.getBinBuffer()).then(function (data) {
        var is = new TarsStream.TarsInputStream(data.response.sBuffer);
        try {
            return decode(is);
        } catch (e) {
            throw { code: TarsError.CLIENT.DECODE_ERROR, message: e.message };
        }
    }, function (data) {
        var err = (data && data.error) || {};
        throw { code: err.code, message: err.message };
    });
};

EchoTars.Proxy.prototype.echo = function (req) {
    return this._invoke("echo", function (os) { os.writeBytes(1, req); }, function (is) {
        return { ret: is.readInt32(0, true), rsp: is.readBytes(2, true, TarsStream.BinBuffer) };
    });
};

EchoTars.Proxy.prototype.sum = function (nums, label) {
    return this._invoke("sum", function (os) {
        var list = TarsStream.List(TarsStream.Int32);
        nums.forEach(function (n) { list.push(n); });
        os.writeList(1, list);
        os.writeString(2, label);
    }, function (is) {
        return { ret: is.readInt32(0, true), total: is.readInt64(3, true), echoed: is.readString(4, true) };
    });
};

EchoTars.Proxy.prototype.sleep = function (ms) {
    return this._invoke("sleep", function (os) { os.writeInt32(1, ms); }, function (is) {
        return { ret: is.readInt32(0, true) };
    });
};
