// Package soak holds tarscomm's soak test (issue 16), which `make soak` runs: it has no code of its
// own, only TestSoak, skipped unless the environment variable TARSCOMM_SOAK gives its duration
// (TARSCOMM_SOAK=60s), so that `make test` does not run it.
//
// For that long, many callers make sync, async, future, one-way and backup-request calls with
// random deadlines from 1 ms to 1 s, some of them cancelled early, against several project
// servers (package server), each behind its own fault proxy (internal/faultproxy) whose faults
// (stall, black hole, reset, refuse, garbage, slow link, delay, hang-up) a chaos goroutine switches
// on and off at random. The servants' endpoint list comes from a naming.Source of the test that
// pushes a new random subset every few milliseconds. The run is a series of epochs: each starts a
// Communicator with a random configuration and closes it in the middle of its callers' traffic.
//
// Every call has a unique id and a record of its completions (a sync or one-way call's return, an
// async callback, a future's resolution). The soak fails on:
//
//   - a call with no completion, or with two; an async call refused by AsyncInvoke whose callback
//     runs anyway; a reply that answers another call;
//   - a success after the call's deadline. This is checked two ways. Exactly: the server stamps
//     every reply with the time its handler finished (same process, same monotonic clock), and
//     the client cannot have taken a reply before it was made, so a success stamped after the
//     deadline was delivered after it; no slack. This is the check that is exact, and it covers
//     every two-way kind. By observation, for sync calls: the time Invoke returned may exceed the
//     deadline by the observation's own cost (the waiter's wake-up, which on a loaded 2-core
//     machine takes tens of milliseconds when the net thread's core is busy) plus any time in that
//     window during which the process demonstrably could not run a goroutine (a monitor goroutine
//     that wakes every millisecond measures these stalls). The bound on that cost is 50 ms by
//     default (TARSCOMM_SOAK_SLACK changes it): a library that checks the deadline when it takes
//     a reply was seen observed 13 ms late beyond the stalls, so a bound of a few milliseconds
//     would fail at random; the summary counts the successes observed more than 5 ms late (beyond
//     the stalls) as a figure. Async and future completions are observed after the async worker
//     queue, which the deadline does not cover, so only the exact check applies to them. One-way
//     calls have no reply: their success (handed to the connection) is not checked;
//   - an async callback that starts after Communicator.Close returned;
//   - a call begun after Close returned that does not fail with ErrClosed (or its context's error);
//   - a Close that does not return within its bound, or callers still inside a call long after
//     every deadline: the test then dumps every goroutine's stack;
//   - goroutines of the Communicator left after Close (goleak, per epoch and for the whole run);
//   - a max-inflight slot not returned: ServantProxy.Inflight() is not 0 once every call ended.
//
// It ends with a one-line summary: calls by kind, outcomes by error class, closes, endpoint
// updates and faults.
package soak
