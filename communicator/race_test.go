//go:build race

package communicator_test

// raceEnabled is true in builds with the race detector, which run 5-10x slower: tests that
// bound latency or throughput under load widen their bounds there, and the strict bounds are
// checked by CI in a run without -race (see .ci/run).
const raceEnabled = true
