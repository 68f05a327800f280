//go:build !race

package communicator_test

// raceEnabled: see race_test.go.
const raceEnabled = false
