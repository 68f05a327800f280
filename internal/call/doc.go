// Package call holds the request object that travels from a caller goroutine through a net
// thread to a server and back, and the small lock-free structures that move it: the intrusive
// submission stack a net thread drains, the timing wheel that expires calls on the loop, and the
// errors a call ends with.
//
// A Call has three owners over its life, handed over with happens-before edges:
//
//  1. the caller goroutine, which takes it from the pool, encodes the request frame into it and
//     pushes it onto a net thread's Stack;
//  2. the net thread's loop goroutine, which pops it, writes it, keeps it in its pending table
//     and Wheel, and ends it with Complete;
//  3. whoever is woken by Complete (the sync caller, or an asyncproc worker), which reads the
//     result and puts the Call back into the pool.
//
// A caller that gives up (its context was cancelled) calls Abandon; the loop then recycles the
// Call itself when it would have completed it, so a Call is never returned to the pool twice and
// never completed twice.
//
// This package is internal: users see its errors re-exported by servantproxy and communicator.
package call
