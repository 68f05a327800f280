// Package lograte limits how often a log line is written for one key: at most once per interval
// (a second by default), the line that is written saying how many of its kind were left out since
// the one before. It is for lines a peer or a caller can repeat at will: a handler that panics on
// every request, a callback that panics on every reply, an endpoint that refuses every connect.
//
// A Limiter keeps one Clock per key. A caller that logs about one key from many places (an
// endpoint's connections on every net thread) takes its Clock once and asks it alone, without
// the Limiter's map and lock: a Clock is two atomics. Either way, a line left out costs no
// formatting (no stack is taken), so a storm of them costs little and writes one line a second
// per key.
package lograte
