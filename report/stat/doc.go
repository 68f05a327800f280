// Package stat reports call statistics to the TARS stat service (tars.tarsstat.StatObj,
// interface StatF) as TarsCpp does: every interval, one reportMicMsg per batch of at most
// max-report-size bytes, with a StatMicMsgHead and a StatMicMsgBody per (caller, callee,
// function, endpoint).
//
// A Reporter reads a func() stats.Snapshot (Communicator.Stats, or a server's), keeps the
// previous snapshot, and sends the Delta: per key, successes (count), timeouts (timeoutCount),
// every other failure (execCount: connection, queue full, no endpoint, server error, ...), the
// successes' latencies in TARS's buckets (intervalCount, keys 5, 10, 50, 100, 200, 500, 1000,
// 2000, 3000 ms, all present; a latency of 3 s or more counts in none), and their total, greatest
// and least in milliseconds. The greatest and least are the interval's own, as TarsCpp's are,
// when the source ends a period as it copies its counters (stats.Counters.Period: the
// Communicator's reporter does, and Server.StatsEndingPeriod for a server's); a report deferred
// for a missing net thread carries the periods of those that answered to the next one. With a
// source of cumulative counters alone (Communicator.Stats, Server.Stats) they are exact in the
// first report of a key and whenever the interval held a new extreme of all its calls, and
// otherwise the bounds of the buckets that grew, clamped to those extremes (stats.Histogram.Sub).
//
// The head is filled as TarsCpp's client fills it: masterName "<modulename>@<version>",
// slaveName the first two dot parts of the object name ("App.Server"), interfaceName the
// function, masterIp the node name (empty for a standalone client: the stat server fills it
// in), slaveIp and slavePort the endpoint, returnValue 0; as TarsCpp's trimAndLimitStr, names
// lose leading and trailing CR and tab and are cut to 127 bytes, addresses to 50 (a host
// from a registry, DNS or etcd may be a long name). A client in a set
// (Options.SetDivision "app.sz.1") has masterName "<modulename>.appsz1@<version>"; an endpoint in
// a set (its -s, stats.Endpoint.Set) gives slaveName ".appsz1" after the object's two parts and
// its name, area and group in slaveSetName, slaveSetArea and slaveSetID. With FromClient false
// (a server reporting what it served, bFromClient = false) the callee is this server: slaveName
// is the module name, slaveIp and slavePort the address served, and masterName the caller as
// TarsGo's server names it ("stat_from_server"). Keys that map to the same head are merged.
//
// Calls to the stat servant itself are not reported, nor one-way calls that were sent (they have
// no outcome; TarsCpp reports none). A report whose snapshot lacks a net thread (one that did not
// answer in time) waits for the next interval, the first report too when Options.Threads says
// how many there are. A Reporter's goroutine is started by Start and stopped by Close, which
// first sends the batches of a report it cut short that were never sent, then what is left;
// Flush sends at once. Its methods are safe for
// concurrent use.
package stat
