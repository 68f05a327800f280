// Package stats is the data model of what tarscomm counts, and the recorder that counts it where
// the work happens.
//
// # Recording
//
// A Recorder belongs to one goroutine, a net thread's loop: it takes no lock and uses no atomic,
// so recording a finished call costs one map lookup and a few increments. Endpoint returns the
// handle of one (servant, endpoint) pair, which the loop keeps beside its connection; the handle's
// Record looks the function name up in a map of its own, and allocates only the first time a
// function is seen (a pair counts at most MaxFunctions functions apart, later ones under
// OtherFunctions, and at most MaxCodes codes per function, later ones under OtherCodes). Record
// counts the call under its Result (success, timeout, connection, queue full, no endpoint,
// overload, closed, cancelled, refused, server error with its TARS return code)
// and, for a success, its latency in a Histogram of fixed bounds: Bounds, which hold TARS's stat
// buckets (5, 10, 50, 100, 200, 500, 1000, 2000, 3000 ms) and finer ones below 5 ms. A one-way
// call that was sent is not recorded (it has no outcome; TarsCpp reports none either): the
// endpoint's Sent counts it. One that failed is.
//
// Failures that happen before a call reaches a loop (a full net-thread queue seen by the caller,
// the async bounds, max-inflight, a closed communicator) are counted in a Shared recorder, which
// takes a mutex: those paths are rare and already slow. They, and the calls that ended on a loop
// before an endpoint was chosen, are counted under endpoint ""; a call an endpoint refused (its
// reconnect backoff, a full send buffer, a request too large) is counted under that endpoint.
//
// # Reading
//
// Snapshot copies a Recorder's counters into a Snapshot, a plain value; call it on the
// Recorder's own goroutine (post a task to the loop). The communicator fills the per net thread
// (NetThread) and per endpoint (Endpoint) parts from its own counters at the same time. Merge
// joins the pieces of every loop into one Snapshot, Delta subtracts an earlier one for reporters
// that send what happened in an interval. A Snapshot shares nothing with its Recorder, so any
// goroutine may read it.
package stats
