//go:build race

package bufpool

// raceEnabled: sync.Pool drops items at random under the race detector, so reuse cannot be
// counted there.
const raceEnabled = true
